import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import { cachedLabelled, cachedNamespace, cachedSync } from "./cached-forms.ts";
import { syncOfLabels, syncOwnedLabels } from "./labels.ts";
import { syncsForPush } from "./push-match.ts";
import { needsManager, refOf } from "./sync-watcher.ts";

const managedFields = [{ manager: "kubectl", operation: "Apply", fieldsV1: { "f:spec": { "f:git": {} } } }];

/** A RepoSync as the API server sends it: managedFields, and a status written by its reconciler. */
function repoSync(
  name: string,
  meta: Partial<KubeObject["metadata"]> = {},
  git: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: {
      name,
      namespace: "team-a",
      uid: `uid-${name}`,
      resourceVersion: "10",
      generation: 1,
      labels: { team: "a" },
      annotations: { note: "x" },
      finalizers: ["configsync.gke.io/reconciler-manager"],
      managedFields,
      ...meta,
    },
    spec: { sourceFormat: "unstructured", git: { repo: "https://github.com/acme/config", branch: "main", ...git } },
    status: { conditions: [{ type: "Syncing", status: "False", message: "x".repeat(1000) }], lastSyncedCommit: "abc" },
  };
}

test("a cached sync keeps no managedFields and no status, and every metadata field and the spec", () => {
  const full = repoSync("a");
  const cached = cachedSync(full);
  const stored = JSON.parse(JSON.stringify(cached)) as KubeObject; // as the informer's store keeps it
  assert.equal(stored.metadata.managedFields, undefined);
  assert.equal(stored["status"], undefined);
  const { managedFields: _dropped, ...metadata } = full.metadata;
  assert.deepEqual(stored.metadata, metadata);
  assert.deepEqual(stored["spec"], full["spec"]);
  assert.deepEqual(refOf(stored), refOf(full));
});

test("the manager decides the same on cached syncs as on full ones: which change needs a job, which push concerns which sync", () => {
  const base = repoSync("a");
  const changes: KubeObject[] = [
    { ...base, status: { lastSyncedCommit: "def" }, metadata: { ...base.metadata, resourceVersion: "11" } },
    repoSync("a", { generation: 2 }),
    repoSync("a", { deletionTimestamp: "2026-11-27T00:00:00Z" }),
    repoSync("a", { finalizers: [] }),
    repoSync("a", { labels: { team: "b" } }),
    repoSync("a", { annotations: { "driftless.dev/suspend": "true" } }),
    repoSync("a", { managedFields: [...managedFields, { manager: "other" }] }),
  ];
  for (const changed of changes)
    assert.equal(
      needsManager(cachedSync(changed), cachedSync(base)),
      needsManager(changed, base),
      JSON.stringify(changed.metadata),
    );
  assert.equal(needsManager(cachedSync(base), undefined), true);

  const syncs = [
    repoSync("main"),
    repoSync("dev", {}, { branch: "dev" }),
    repoSync("pinned", {}, { revision: "refs/heads/main" }),
    repoSync("gone", { deletionTimestamp: "2026-11-27T00:00:00Z" }),
    repoSync("unreadable", {}, { repo: "::not a url" }),
  ];
  const push = { repoUrls: ["https://github.com/acme/config.git"], branch: "main", commit: undefined };
  assert.deepEqual(syncsForPush(syncs.map(cachedSync), push), syncsForPush(syncs, push));
});

test("a cached namespace keeps what tells that it is terminating, and a cached Deployment the sync it serves", () => {
  const namespace: KubeObject = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: "team-a",
      resourceVersion: "5",
      deletionTimestamp: "2026-11-27T00:00:00Z",
      labels: { a: "b" },
      managedFields,
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Terminating", conditions: [{ type: "NamespaceDeletionContentFailure" }] },
  };
  assert.deepEqual(JSON.parse(JSON.stringify(cachedNamespace(namespace))), {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "team-a", resourceVersion: "5", deletionTimestamp: "2026-11-27T00:00:00Z" },
    status: { phase: "Terminating" },
  });
  assert.equal(cachedNamespace({ apiVersion: "v1", kind: "Namespace", metadata: { name: "x" } })["status"], undefined);

  const sync = { kind: "RepoSync", namespace: "team-a", name: "repo-sync" } as const;
  const deployment: KubeObject = {
    apiVersion: "meta.k8s.io/v1",
    kind: "PartialObjectMetadata",
    metadata: {
      name: "ns-reconciler-team-a",
      namespace: "config-management-system",
      resourceVersion: "7",
      labels: syncOwnedLabels(sync),
      annotations: { "deployment.kubernetes.io/revision": "1" },
      managedFields,
    },
  };
  const cached = JSON.parse(JSON.stringify(cachedLabelled(deployment))) as KubeObject;
  assert.deepEqual(syncOfLabels(cached.metadata.labels), sync);
  assert.deepEqual(Object.keys(cached.metadata).sort(), ["labels", "name", "namespace", "resourceVersion"]);
});
