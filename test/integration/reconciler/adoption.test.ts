/**
 * A cluster Config Sync has been syncing switches to driftless. The objects are made as Config Sync
 * makes them: server-side applied by a real request with its field manager (`configsync.gke.io`,
 * forced) and its labels and annotations. driftless, reconciling the same repository, adopts them
 * without writing those that are unchanged, without a management conflict (KNV1060), and removes a
 * field Config Sync applied that Git no longer declares.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import {
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  syncErrorsAt,
  testEnv,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const configMaps: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: [],
};
const roles: ResourceMapping = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "Role",
  resource: "roles",
  namespaced: true,
  verbs: [],
};

/** kubectl's ApplySet id (KEP-3659 v1) of RootSync `name`, the id Config Sync labels its objects with. */
function applySetIdOf(name: string): string {
  const digest = createHash("sha256").update(`${name}.${rootSyncNamespace}.RootSync.configsync.gke.io`).digest();
  return `applyset-${digest.toString("base64url")}-v1`;
}

/** What Config Sync's reconciler for RootSync `sync` applies for a declaration in `path` of `commit`. */
function asConfigSyncApplies(
  declared: JsonObject,
  options: { sync: string; path: string; commit: string; repo: TestRepo; resourceId: string },
): JsonObject {
  const meta = declared["metadata"] as JsonObject;
  return {
    ...declared,
    metadata: {
      ...meta,
      labels: {
        ...(meta["labels"] as JsonObject | undefined),
        "app.kubernetes.io/managed-by": "configmanagement.gke.io",
        "applyset.kubernetes.io/part-of": applySetIdOf(options.sync),
        "configsync.gke.io/declared-version": String(declared["apiVersion"]).split("/").pop(),
      },
      annotations: {
        "configmanagement.gke.io/managed": "enabled",
        "configsync.gke.io/manager": `:root_${options.sync}`,
        "configsync.gke.io/resource-id": options.resourceId,
        "config.k8s.io/owning-inventory": `${rootSyncNamespace}_${options.sync}`,
        "configmanagement.gke.io/source-path": options.path,
        "configmanagement.gke.io/token": options.commit,
        "configsync.gke.io/git-context": JSON.stringify({
          repo: options.repo.url,
          branch: options.repo.branch,
          rev: "HEAD",
        }),
      },
    },
  };
}

test("objects Config Sync applied are adopted: unchanged ones are not written, no KNV1060, and a field removed from Git is removed", async (t) => {
  const namespace = await testNamespace(t, "adopt");
  const sync = `adopt-${suffix()}`;
  const repo = await TestRepo.create(t);
  const settings = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings", namespace },
    data: { mode: "prod" },
  };
  const reader = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "reader", namespace, labels: { team: "a" } },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
  };
  const trimmed = (data: Record<string, string>): JsonObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "trimmed", namespace, labels: { tier: "web", legacy: "yes" } },
    data,
  });
  await repo.write("config/settings.yaml", JSON.stringify(settings));
  await repo.write("config/rbac/reader.yaml", JSON.stringify(reader));
  await repo.write("config/trimmed.yaml", JSON.stringify(trimmed({ keep: "1", drop: "2" })));
  const synced = await repo.commit("what Config Sync synced");

  // Config Sync's apply of that commit, by real requests to the API server.
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  const apply = (mapping: ResourceMapping, object: JsonObject, path: string, resourceId: string) =>
    client.patch(
      mapping,
      namespace,
      String((object["metadata"] as JsonObject)["name"]),
      asConfigSyncApplies(object, { sync, path, commit: synced, repo, resourceId }),
      "apply",
      { fieldManager: "configsync.gke.io", force: true },
    );
  const before = {
    settings: await apply(configMaps, settings, "config/settings.yaml", `_configmap_${namespace}_settings`),
    reader: await apply(roles, reader, "config/rbac/reader.yaml", `rbac.authorization.k8s.io_role_${namespace}_reader`),
    trimmed: await apply(
      configMaps,
      trimmed({ keep: "1", drop: "2" }),
      "config/trimmed.yaml",
      `_configmap_${namespace}_trimmed`,
    ),
  };
  // Another writer's field on an adopted object: never Config Sync's, so never driftless's to remove.
  await client.patch(configMaps, namespace, "trimmed", { data: { theirs: "x" } }, "merge", {
    fieldManager: "someone-else",
  });

  // Then Git drops a key and a label of `trimmed`, and driftless takes over from Config Sync.
  await repo.write(
    "config/trimmed.yaml",
    JSON.stringify({ ...trimmed({ keep: "1" }), metadata: { name: "trimmed", namespace, labels: { tier: "web" } } }),
  );
  const head = await repo.commit("drop a key and a label");
  await createRootSync(sync, repo);
  // resyncPeriodMs 0: every poll is a full pass, so the idle passes below match every object again.
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name: sync },
    { resyncPeriodMs: 0 },
  );
  const status = await rootSynced(sync, head);

  const errors = [
    ...(((status["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[]),
    ...(((status["source"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[]),
  ];
  assert.deepEqual(errors, [], "adopting Config Sync's objects reported errors (KNV1060?)");

  const read = async (mapping: ResourceMapping, name: string): Promise<KubeObject> => {
    const live = await client.get(mapping, namespace, name);
    assert.ok(live !== undefined, `${name} is gone`);
    return live;
  };
  const settingsNow = await read(configMaps, "settings");
  const readerNow = await read(roles, "reader");
  assert.equal(
    settingsNow.metadata.resourceVersion,
    before.settings.metadata.resourceVersion,
    "an unchanged ConfigMap Config Sync applied was written",
  );
  assert.equal(
    readerNow.metadata.resourceVersion,
    before.reader.metadata.resourceVersion,
    "an unchanged Role Config Sync applied was written",
  );
  // Unwritten, an adopted object keeps Config Sync's token: the commit it was last changed at.
  assert.equal(settingsNow.metadata.annotations?.["configmanagement.gke.io/token"], synced);

  const trimmedNow = await read(configMaps, "trimmed");
  assert.deepEqual(trimmedNow["data"], { keep: "1", theirs: "x" }, "the key Git dropped was not removed");
  assert.equal(trimmedNow.metadata.labels?.["legacy"], undefined, "the label Git dropped was not removed");
  assert.equal(trimmedNow.metadata.labels?.["tier"], "web");
  assert.equal(trimmedNow.metadata.annotations?.["configmanagement.gke.io/token"], head);

  // Idle: adopted objects that were never written (no driftless record yet) cost no write either.
  const settled = reconciler.passCount;
  await eventually(() => reconciler.passCount >= settled + 1, { what: "one more pass" });
  const writesBefore = reconciler.client.requests.writes();
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 3, { what: "three more passes" });
  assert.equal(reconciler.client.requests.writes() - writesBefore, 0, "an unchanged pass wrote to the API server");
  assert.equal((await read(configMaps, "settings")).metadata.resourceVersion, before.settings.metadata.resourceVersion);
});

test("an object another sync manages is still not taken over, with Config Sync's metadata on it", async (t) => {
  const namespace = await testNamespace(t, "adopt-other");
  const sync = `adopt-${suffix()}`;
  const repo = await TestRepo.create(t);
  const declared = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "shared", namespace },
    data: { a: "mine" },
  };
  await repo.write("config/shared.yaml", JSON.stringify(declared));
  const head = await repo.commit("claim");
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  const other = asConfigSyncApplies(
    { ...declared, data: { a: "theirs" } },
    { sync: "other", path: "shared.yaml", commit: head, repo, resourceId: `_configmap_${namespace}_shared` },
  );
  const applied = await client.patch(configMaps, namespace, "shared", other, "apply", {
    fieldManager: "configsync.gke.io",
    force: true,
  });
  await createRootSync(sync, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: sync });
  const errors = await syncErrorsAt(sync, head);
  assert.equal(errors[0]?.["code"], "1060");
  const live = await client.get(configMaps, namespace, "shared");
  assert.equal(live?.metadata.resourceVersion, applied.metadata.resourceVersion, "another sync's object was written");
});
