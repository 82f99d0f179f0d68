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

test("a request counts as answered by its own echo or a later request's, never by an unrelated value", () => {
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
  assert.equal(requestAnswered(sync(), asked), false);
  assert.equal(requestAnswered(sync(asked), asked), true);
  assert.equal(requestAnswered(sync("2025-01-01T00:00:01.000Z"), asked), true);
  assert.equal(requestAnswered(sync("2024-12-31T23:59:59.000Z"), asked), false);
  assert.equal(requestAnswered(sync("now"), asked), false);
});
