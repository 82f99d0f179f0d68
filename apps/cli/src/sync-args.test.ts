import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSyncArgs } from "./sync-args.ts";
import type { KubeObject } from "@driftless/kube";
import { requestAnswered } from "./sync-actions.ts";

test("a sync is named as kubectl names objects: TYPE NAME or TYPE/NAME, with kubectl's type spellings", () => {
  assert.deepEqual(parseSyncArgs(["rootsync", "root-sync"], undefined), {
    kind: "RootSync",
    name: "root-sync",
    namespace: "config-management-system",
  });
  assert.deepEqual(parseSyncArgs(["reposyncs.configsync.gke.io/repo-sync"], "team-a"), {
    kind: "RepoSync",
    name: "repo-sync",
    namespace: "team-a",
  });
  assert.equal(parseSyncArgs(["RepoSync", "x"], undefined).namespace, "default");
  assert.throws(() => parseSyncArgs(["deployment", "x"], undefined), /not rootsync or reposync/);
  assert.throws(() => parseSyncArgs(["rootsync"], undefined), /needs a NAME/);
  assert.throws(() => parseSyncArgs(["rootsync/a", "b"], undefined), /one sync at a time/);
  assert.throws(() => parseSyncArgs([], undefined), /name a sync/);
});

test("without -n a RepoSync is looked for in the kubeconfig context's namespace, a RootSync in config-management-system", () => {
  assert.equal(parseSyncArgs(["reposync", "x"], undefined, "team-a").namespace, "team-a");
  assert.equal(parseSyncArgs(["reposync", "x"], "team-b", "team-a").namespace, "team-b");
  assert.equal(parseSyncArgs(["rootsync", "x"], undefined, "team-a").namespace, "config-management-system");
});

test("a request counts as answered by its own echo or that of a request replacing it, never by a later time", () => {
  const sync = (handled?: string): KubeObject =>
    ({
      apiVersion: "v1",
      kind: "RootSync",
      metadata: {
        name: "s",
        annotations: handled === undefined ? {} : { "driftless.dev/sync-request-handled": handled },
      },
    }) as KubeObject;
  const asked = "2025-01-01T00:00:00.000Z";
  const ours = new Set([asked]);
  assert.equal(requestAnswered(sync(), ours), false);
  assert.equal(requestAnswered(sync(asked), ours), true);
  // A handled value from a faster clock, or written by whoever may patch the sync, answers nothing.
  assert.equal(requestAnswered(sync("2099-01-01T00:00:00Z"), ours), false);
  assert.equal(requestAnswered(sync("2025-01-01T00:00:01.000Z"), ours), false);
  assert.equal(requestAnswered(sync("now"), ours), false);
  // A request seen replacing ours is answered by its own echo.
  assert.equal(requestAnswered(sync("2025-01-01T00:00:01.000Z"), new Set([asked, "2025-01-01T00:00:01.000Z"])), true);
});
