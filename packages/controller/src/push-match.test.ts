import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import { syncsForPush } from "./push-match.ts";

function repoSync(name: string, git: Record<string, unknown>, extra: Partial<KubeObject["metadata"]> = {}): KubeObject {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name, namespace: "team-a", ...extra },
    spec: { sourceFormat: "unstructured", git: { auth: "none", ...git } },
  };
}

test("matches the repository in any URL form and the branch each sync follows", () => {
  const syncs = [
    repoSync("a", { repo: "git@github.com:acme/config.git", branch: "main" }),
    repoSync("b", { repo: "https://github.com/acme/config", branch: "dev" }),
    repoSync("c", { repo: "https://github.com/acme/other", branch: "main" }),
    repoSync("d", { repo: "https://github.com/acme/config" }), // follows master by default
    repoSync("e", { repo: "https://github.com/acme/config", revision: "v1.0.0" }), // pinned to a tag
    repoSync("f", { repo: "https://github.com/acme/config", revision: "refs/heads/main" }),
    repoSync(
      "g",
      { repo: "https://github.com/acme/config", branch: "main" },
      { deletionTimestamp: "2026-01-01T00:00:00Z" },
    ),
  ];
  const push = { repoUrls: ["https://github.com/acme/config.git"], branch: "main", commit: undefined };
  assert.deepEqual(
    syncsForPush(syncs, push).syncs.map((s) => s.name),
    ["a", "f"],
  );
  assert.deepEqual(
    syncsForPush(syncs, { ...push, branch: "master" }).syncs.map((s) => s.name),
    ["d"],
  );
});

test("a sync whose repository URL cannot be read is skipped and named; the others still match", () => {
  const syncs = [
    repoSync("bad", { repo: "https://github.com/acme/%zz", branch: "main" }),
    repoSync("good", { repo: "https://github.com/acme/config", branch: "main" }),
  ];
  const push = {
    repoUrls: ["https://github.com/acme/%zz", "https://github.com/acme/config"],
    branch: "main",
    commit: undefined,
  };
  const match = syncsForPush(syncs, push);
  assert.deepEqual(
    match.syncs.map((s) => s.name),
    ["good"],
  );
  assert.deepEqual(match.unreadable, [
    { sync: { kind: "RepoSync", namespace: "team-a", name: "bad" }, repo: "https://github.com/acme/%zz" },
  ]);
});
