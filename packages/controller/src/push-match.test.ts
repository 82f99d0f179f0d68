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

test("a GitHub push matches a sync naming the repository in another case (GitHub ignores it)", () => {
  const syncs = [repoSync("lower", { repo: "https://github.com/octo-org/hello-world", branch: "main" })];
  const push = {
    repoUrls: ["https://github.com/Octo-Org/Hello-World.git", "git@github.com:Octo-Org/Hello-World.git"],
    branch: "main",
    commit: undefined,
  };
  assert.deepEqual(
    syncsForPush(syncs, push).syncs.map((s) => s.name),
    ["lower"],
  );
});

test("a tag push triggers the syncs whose revision (or branch) names that tag, never those following a branch", () => {
  const syncs = [
    repoSync("revision", { repo: "https://github.com/acme/config", revision: "v1.0.0" }),
    repoSync("full-ref", { repo: "https://github.com/acme/config", revision: "refs/tags/v1.0.0" }),
    repoSync("tags-prefix", { repo: "https://github.com/acme/config", revision: "tags/v1.0.0" }),
    // As git-sync, the fetcher resolves a branch name that only a tag has.
    repoSync("branch-naming-tag", { repo: "https://github.com/acme/config", branch: "v1.0.0" }),
    repoSync("branch", { repo: "https://github.com/acme/config", branch: "main" }),
    repoSync("other-tag", { repo: "https://github.com/acme/config", revision: "v2.0.0" }),
    repoSync("heads-ref", { repo: "https://github.com/acme/config", revision: "refs/heads/v1.0.0" }),
    repoSync("commit", { repo: "https://github.com/acme/config", revision: "a".repeat(40) }),
    repoSync("other-repo", { repo: "https://github.com/acme/other", revision: "v1.0.0" }),
  ];
  const push = { repoUrls: ["https://github.com/acme/config.git"], branch: "v1.0.0", commit: undefined };
  assert.deepEqual(
    syncsForPush(syncs, { ...push, tag: true }).syncs.map((s) => s.name),
    ["revision", "full-ref", "tags-prefix", "branch-naming-tag"],
  );
  assert.deepEqual(
    syncsForPush(syncs, push).syncs.map((s) => s.name),
    ["revision", "branch-naming-tag", "heads-ref"],
    "a branch push of that name",
  );
});

function helmSync(name: string, repo: string, version?: string): KubeObject {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name, namespace: "team-a" },
    spec: {
      sourceFormat: "unstructured",
      sourceType: "helm",
      helm: { repo, chart: "app", auth: "none", ...(version === undefined ? {} : { version }) },
    },
  };
}

test("a registry push triggers the Helm syncs whose oci:// chart is the pushed repository, whatever tag", () => {
  const syncs = [
    helmSync("range", "oci://registry.example.com/charts", "^1.2.0"),
    helmSync("latest", "oci://registry.example.com/charts/"),
    helmSync("other-registry", "oci://other.example.com/charts"),
    helmSync("https-repo", "https://registry.example.com/charts"),
  ];
  const push = {
    repoUrls: ["registry.example.com/charts/app"],
    branch: "1.2.3",
    commit: undefined,
    image: true as const,
  };
  assert.deepEqual(
    syncsForPush(syncs, push).syncs.map((s) => s.name),
    ["range", "latest"],
  );
  assert.deepEqual(
    syncsForPush(syncs, { ...push, image: undefined, repoUrls: ["https://registry.example.com/charts/app"] }).syncs,
    [],
    "a Git push",
  );
});

test("each sync's spec and URL are read once, not on every push", () => {
  let specReads = 0;
  const sync = repoSync("a", { repo: "https://github.com/acme/config", branch: "main" });
  const spec = sync["spec"];
  Object.defineProperty(sync, "spec", {
    enumerable: true,
    get: () => {
      specReads++;
      return spec;
    },
  });
  const push = { repoUrls: ["https://github.com/acme/config"], branch: "main", commit: undefined };
  assert.equal(syncsForPush([sync], push).syncs.length, 1);
  const afterOnePush = specReads;
  for (let i = 0; i < 10; i++) assert.equal(syncsForPush([sync], push).syncs.length, 1);
  assert.equal(specReads, afterOnePush);
});

test("a sync whose URL is over the CRDs' maxLength is skipped as unreadable, and costs no push its time", () => {
  const long = `https://example.invalid/${"/".repeat(40_000)}x`;
  const syncs = [
    repoSync("long", { repo: long, branch: "main" }),
    repoSync("good", { repo: "https://github.com/acme/config", branch: "main" }),
  ];
  const match = syncsForPush(syncs, {
    repoUrls: ["https://github.com/acme/config"],
    branch: "main",
    commit: undefined,
  });
  assert.deepEqual(
    match.syncs.map((s) => s.name),
    ["good"],
  );
  assert.deepEqual(
    match.unreadable.map((u) => u.sync.name),
    ["long"],
  );
});
