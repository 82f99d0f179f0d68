import { test } from "node:test";
import assert from "node:assert/strict";
import { inventoryId } from "@driftless/api";
import {
  coreApi,
  customApi,
  eventually,
  type JsonObject,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  syncErrorsAt,
  TestRepo,
} from "../../support/index.ts";

const rootNamespace = "config-management-system";
const rootSyncs = { group: "configsync.gke.io", version: "v1beta1", namespace: rootNamespace, plural: "rootsyncs" };

async function ensureRootNamespace(): Promise<void> {
  try {
    await coreApi().createNamespace({ body: { metadata: { name: rootNamespace } } });
  } catch (error) {
    if (statusCode(error) !== 409) throw error;
  }
}

async function createRootSync(
  name: string,
  repo: TestRepo,
  annotations: Record<string, string> = {},
  moreSpec: JsonObject = {},
): Promise<void> {
  await ensureRootNamespace();
  await customApi().createNamespacedCustomObject({
    ...rootSyncs,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name, namespace: rootNamespace, annotations },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none" },
        ...moreSpec,
      },
    },
  });
}

function synced(name: string, commit: string): Promise<JsonObject> {
  return eventually(
    async () => {
      const status = await rootSyncStatus(name);
      return status["lastSyncedCommit"] === commit ? status : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} synced to ${commit.slice(0, 7)}` },
  );
}

async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

const yaml = (obj: unknown): string => JSON.stringify(obj);

function crd(group: string): unknown {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { spec: { type: "object", properties: { size: { type: "integer" } } } },
            },
          },
        },
      ],
    },
  };
}

test("applies a CRD, a Namespace and custom resources in one commit, in dependency order", async (t) => {
  const id = suffix();
  const group = `d${id}.example.com`;
  const namespace = `root-${id}`;
  const name = `root-${id}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/crd.yaml", yaml(crd(group)));
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write(
    "config/widget.yaml",
    yaml({ apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w", namespace }, spec: { size: 3 } }),
  );
  await repo.write(
    "config/first.yaml",
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "first", namespace }, data: { order: "1" } }),
  );
  await repo.write(
    "config/second.yaml",
    yaml({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "second",
        namespace,
        annotations: { "config.kubernetes.io/depends-on": `/namespaces/${namespace}/ConfigMap/first` },
      },
      data: { order: "2" },
    }),
  );
  const commit = await repo.commit("crd, namespace, widget, ordered config maps");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootNamespace, name });
  await synced(name, commit);

  const widget = (await customApi().getNamespacedCustomObject({
    group,
    version: "v1",
    namespace,
    plural: "widgets",
    name: "w",
  })) as JsonObject;
  assert.deepEqual(widget["spec"], { size: 3 });
  assert.equal(
    ((widget["metadata"] as JsonObject)["annotations"] as Record<string, string>)["configsync.gke.io/manager"],
    ":root_" + name,
  );
  const first = await coreApi().readNamespacedConfigMap({ namespace, name: "first" });
  const second = await coreApi().readNamespacedConfigMap({ namespace, name: "second" });
  // resourceVersions grow with every write in etcd: the dependency was written first.
  assert.ok(
    Number(first.metadata?.resourceVersion) < Number(second.metadata?.resourceVersion),
    "depends-on was not honoured",
  );
});

test("depends-on waits for its dependency to be Current; until then the dependent is skipped with an error", async (t) => {
  const id = suffix();
  const name = `wait-${id}`;
  const namespace = `wait-${id}`;
  const repo = await TestRepo.create(t);
  // This control plane has no scheduler or kubelet: a Deployment with replicas never becomes
  // available (InProgress), one scaled to 0 is Current as soon as its controller observes it.
  const deployment = (replicas: number): unknown => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } },
    },
  });
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/web.yaml", yaml(deployment(1)));
  await repo.write(
    "config/after-web.yaml",
    yaml({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "after-web",
        namespace,
        annotations: { "config.kubernetes.io/depends-on": `apps/namespaces/${namespace}/Deployment/web` },
      },
      data: { ready: "yes" },
    }),
  );
  const first = await repo.commit("a config map that depends on a deployment");
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  await createRootSync(name, repo, {}, { override: { reconcileTimeout: "2s" } });
  await startReconciler(t, { kind: "RootSync", namespace: rootNamespace, name });
  const failed = await eventually(
    async () => {
      const s = await rootSyncStatus(name);
      const errors = ((s["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];
      return (s["sync"] as JsonObject | undefined)?.["commit"] === first && errors.length > 0 ? errors : undefined;
    },
    { timeoutMs: 60_000, what: "the pass to report the dependency" },
  );
  assert.ok(
    failed.some((e) =>
      String(e["errorMessage"]).includes(
        `skipped apply of ConfigMap, ${namespace}/after-web: dependency apply reconcile timeout: ${namespace}_web_apps_Deployment`,
      ),
    ),
    `no dependency error in ${JSON.stringify(failed)}`,
  );
  assert.equal(await exists(() => coreApi().readNamespacedConfigMap({ namespace, name: "after-web" })), false);
  assert.equal(
    await exists(() =>
      customApi().getNamespacedCustomObject({
        group: "apps",
        version: "v1",
        namespace,
        plural: "deployments",
        name: "web",
      }),
    ),
    true,
    "the dependency itself was not applied",
  );

  await repo.write("config/web.yaml", yaml(deployment(0)));
  const second = await repo.commit("scale to zero: the deployment becomes Current");
  const status = await synced(name, second);
  assert.deepEqual((status["sync"] as JsonObject)["errors"] ?? [], []);
  const cm = await coreApi().readNamespacedConfigMap({ namespace, name: "after-web" });
  assert.equal(cm.data?.["ready"], "yes");
});

test("a depends-on cycle is reported and nothing of the commit is applied", async (t) => {
  const id = suffix();
  const name = `cycle-${id}`;
  const namespace = `cycle-${id}`;
  const repo = await TestRepo.create(t);
  const cm = (cmName: string, dep: string): unknown => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: cmName,
      namespace,
      annotations: { "config.kubernetes.io/depends-on": `/namespaces/${namespace}/ConfigMap/${dep}` },
    },
  });
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/a.yaml", yaml(cm("a", "b")));
  await repo.write("config/b.yaml", yaml(cm("b", "a")));
  const commit = await repo.commit("cycle");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootNamespace, name });
  const status = await eventually(
    async () => {
      const s = await rootSyncStatus(name);
      const syncing = ((s["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Syncing");
      return syncing?.["commit"] === commit && syncing["status"] === "False" ? s : undefined;
    },
    { what: "the pass to finish" },
  );
  const errors = [
    ...(((status["source"] as JsonObject)["errors"] ?? []) as JsonObject[]),
    ...(((status["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[]),
  ];
  // Config Sync's applier: KNV2009 "cyclic dependency: …" among the sync's errors.
  const syncErrors = ((status["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];
  assert.ok(
    syncErrors.some((e) => e["code"] === "2009" && /^KNV2009: cyclic dependency: /.test(String(e["errorMessage"]))),
    `no cycle error among the sync errors in ${JSON.stringify(errors)}`,
  );
  assert.equal(
    await exists(() => coreApi().readNamespace({ name: namespace })),
    false,
    "part of a cyclic commit was applied",
  );
});

test("depends-on an object the source does not apply (management disabled, or only on the cluster) is KNV2009 external dependency, and nothing of the commit is applied", async (t) => {
  const id = suffix();
  const name = `external-${id}`;
  const namespace = `external-${id}`;
  const repo = await TestRepo.create(t);
  const cm = (cmName: string, annotations: Record<string, string> = {}): unknown => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: cmName, namespace, annotations },
  });
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootNamespace, name });
  await synced(name, await repo.commit("the namespace"));
  await repo.write("config/cm0.yaml", yaml(cm("cm0", { "configmanagement.gke.io/managed": "disabled" })));
  await repo.write(
    "config/cm1.yaml",
    yaml(cm("cm1", { "config.kubernetes.io/depends-on": `/namespaces/${namespace}/ConfigMap/cm0` })),
  );
  // Config Sync's applier validates the dependency graph first (cli-utils' ExitEarly): an object that depends
  // on nothing is not applied either.
  await repo.write("config/bystander.yaml", yaml(cm("bystander")));
  const disabled = await repo.commit("cm1 depends on cm0, whose management is disabled");
  const externalError = async (commit: string, dependency: string): Promise<void> => {
    const errors = await eventually(
      async () => {
        const sync = (await rootSyncStatus(name))["sync"] as JsonObject | undefined;
        const found = (sync?.["errors"] ?? []) as JsonObject[];
        return sync?.["commit"] === commit && found.length > 0 ? found : undefined;
      },
      { timeoutMs: 60_000, what: `the external dependency on ${dependency} to be reported` },
    );
    const expected = `external dependency: ConfigMap, ${namespace}/cm1 -> ConfigMap, ${namespace}/${dependency}`;
    assert.ok(
      errors.some((e) => e["code"] === "2009" && String(e["errorMessage"]).includes(expected)),
      `no "${expected}" in ${JSON.stringify(errors)}`,
    );
    assert.equal(await exists(() => coreApi().readNamespacedConfigMap({ namespace, name: "cm1" })), false);
    assert.equal(
      await exists(() => coreApi().readNamespacedConfigMap({ namespace, name: "bystander" })),
      false,
      "an object of a commit with an external dependency was applied",
    );
    const group = (await customApi().getNamespacedCustomObject({
      group: "kpt.dev",
      version: "v1alpha1",
      namespace: rootNamespace,
      plural: "resourcegroups",
      name,
    })) as JsonObject;
    const listed = (((group["spec"] as JsonObject | undefined)?.["resources"] ?? []) as JsonObject[]).map(
      (r) => r["name"],
    );
    assert.ok(
      !listed.includes("bystander"),
      `the inventory records an object never applied: ${JSON.stringify(listed)}`,
    );
  };
  await externalError(disabled, "cm0");

  // On the cluster but not in the source: still external.
  await coreApi().createNamespacedConfigMap({ namespace, body: { metadata: { name: "cm4" } } });
  await repo.remove("config/cm0.yaml");
  await repo.write(
    "config/cm1.yaml",
    yaml(cm("cm1", { "config.kubernetes.io/depends-on": `/namespaces/${namespace}/ConfigMap/cm4` })),
  );
  await externalError(await repo.commit("cm1 depends on cm4, which only the cluster has"), "cm4");

  // Both managed, then both disabled (Config Sync's TestMultiDependencies): released together, no error,
  // since a disabled declaration is not applied and its depends-on is not checked.
  const dependsOnCm0 = { "config.kubernetes.io/depends-on": `/namespaces/${namespace}/ConfigMap/cm0` };
  const disabledAnnotation = { "configmanagement.gke.io/managed": "disabled" };
  await repo.write("config/cm0.yaml", yaml(cm("cm0")));
  await repo.write("config/cm1.yaml", yaml(cm("cm1", dependsOnCm0)));
  await synced(name, await repo.commit("cm1 depends on cm0, both managed"));
  await repo.write("config/cm0.yaml", yaml(cm("cm0", disabledAnnotation)));
  await repo.write("config/cm1.yaml", yaml(cm("cm1", { ...dependsOnCm0, ...disabledAnnotation })));
  const released = await synced(name, await repo.commit("disable both"));
  assert.deepEqual((released["sync"] as JsonObject)["errors"] ?? [], []);
  const cm1 = await coreApi().readNamespacedConfigMap({ namespace, name: "cm1" });
  assert.equal(cm1.metadata?.annotations?.["configmanagement.gke.io/managed"], undefined, "cm1 is still managed");
});

test("depends-on an object the commit prunes skips the dependent's apply and the dependency's delete, in cli-utils' words, while the rest is applied and pruned", async (t) => {
  const id = suffix();
  const name = `leaving-${id}`;
  const namespace = `leaving-${id}`;
  const repo = await TestRepo.create(t);
  const cm = (cmName: string, annotations: Record<string, string> = {}): string =>
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: cmName, namespace, annotations } });
  const live = (cmName: string) => coreApi().readNamespacedConfigMap({ namespace, name: cmName });
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/cm0.yaml", cm("cm0"));
  await repo.write(
    "config/cm1.yaml",
    cm("cm1", { "config.kubernetes.io/depends-on": `/namespaces/${namespace}/ConfigMap/cm0` }),
  );
  await repo.write("config/leaver.yaml", cm("leaver"));
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootNamespace, name });
  await synced(name, await repo.commit("cm1 depends on cm0"));

  // Config Sync's TestExternalDependencyError, first case: cm0 leaves Git while cm1 still depends on it.
  await repo.remove("config/cm0.yaml");
  await repo.remove("config/leaver.yaml");
  await repo.write("config/newcomer.yaml", cm("newcomer"));
  const commit = await repo.commit("cm0 and leaver leave, newcomer arrives");
  // The pass's end: the skipped apply is met before the skipped delete, and a pass applying for over 5 s reports
  // the first alone meanwhile.
  const errors = await syncErrorsAt(name, commit);
  const messages = errors.map((e) => `${String(e["code"])} ${String(e["errorMessage"])}`);
  const key = (cmName: string): string => `${namespace}_${cmName}__ConfigMap`;
  for (const expected of [
    `2009 KNV2009: skipped apply of ConfigMap, ${namespace}/cm1: dependency scheduled for delete: ${key("cm0")}`,
    `2009 KNV2009: skipped delete of ConfigMap, ${namespace}/cm0: dependent scheduled for apply: ${key("cm1")}`,
  ])
    assert.ok(
      messages.some((m) => m.startsWith(expected)),
      `no "${expected}" in ${JSON.stringify(messages)}`,
    );
  assert.equal(messages.length, 2, JSON.stringify(messages));
  assert.equal((await live("cm0")).metadata?.annotations?.["configmanagement.gke.io/managed"], "enabled");
  assert.equal(await exists(() => live("newcomer")), true, "the rest of the commit was not applied");
  await eventually(async () => !(await exists(() => live("leaver"))) || undefined, {
    timeoutMs: 30_000,
    what: "leaver pruned",
  });

  // Fixed in Git: cm1 no longer depends on cm0, which is pruned then.
  await repo.write("config/cm1.yaml", cm("cm1"));
  const fixed = await synced(name, await repo.commit("cm1 depends on nothing"));
  assert.deepEqual((fixed["sync"] as JsonObject)["errors"] ?? [], []);
  assert.equal(await exists(() => live("cm0")), false, "cm0 was not pruned once nothing depended on it");
});

test("an object managed by another RootSync is not taken over (KNV1060)", async (t) => {
  const id = suffix();
  const namespace = `shared-${id}`;
  await coreApi().createNamespace({ body: { metadata: { name: namespace } } });
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  await coreApi().createNamespacedConfigMap({
    namespace,
    body: {
      metadata: {
        name: "owned",
        labels: { "app.kubernetes.io/managed-by": "configmanagement.gke.io" },
        annotations: {
          "configmanagement.gke.io/managed": "enabled",
          // Another RootSync's: a RootSync takes over only what a RepoSync manages (precedence.test.ts).
          "configsync.gke.io/manager": `:root_someone-else-${id}`,
        },
      },
      data: { owner: "other" },
    },
  });
  const name = `conflict-${id}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/owned.yaml",
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "owned", namespace }, data: { owner: "me" } }),
  );
  const commit = await repo.commit("claim");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootNamespace, name });
  const status = await eventually(
    async () => {
      const s = await rootSyncStatus(name);
      const errors = ((s["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];
      return (s["sync"] as JsonObject | undefined)?.["commit"] === commit && errors.length > 0 ? errors : undefined;
    },
    { what: "the conflict error" },
  );
  assert.equal(status[0]?.["code"], "1060");
  const live = await coreApi().readNamespacedConfigMap({ namespace, name: "owned" });
  assert.deepEqual(live.data, { owner: "other" }, "the other sync's object was overwritten");
});

for (const policy of ["Foreground", "Orphan"] as const) {
  test(`deleting a RootSync with ${policy} propagation ${policy === "Foreground" ? "deletes its objects before it disappears" : "leaves its objects, stripped of Config Sync's metadata"}`, async (t) => {
    const id = suffix();
    const name = `del-${id}`;
    const namespace = `del-${id}`;
    await coreApi().createNamespace({ body: { metadata: { name: namespace } } });
    t.after(() =>
      coreApi()
        .deleteNamespace({ name: namespace })
        .catch(() => undefined),
    );
    const repo = await TestRepo.create(t);
    await repo.write(
      "config/a.yaml",
      yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace }, data: { k: "v" } }),
    );
    const commit = await repo.commit("a");
    await createRootSync(name, repo, { "configsync.gke.io/deletion-propagation-policy": policy });
    await startReconciler(t, { kind: "RootSync", namespace: rootNamespace, name });
    await synced(name, commit);

    await customApi().deleteNamespacedCustomObject({ ...rootSyncs, name });
    await eventually(async () => !(await exists(() => customApi().getNamespacedCustomObject({ ...rootSyncs, name }))), {
      timeoutMs: 30_000,
      what: "the RootSync to disappear",
    });
    const left = await exists(() => coreApi().readNamespacedConfigMap({ namespace, name: "a" }));
    if (policy === "Foreground") {
      assert.equal(left, false, "Foreground left a managed object behind");
    } else {
      assert.equal(left, true, "Orphan deleted a managed object");
      const cm = await coreApi().readNamespacedConfigMap({ namespace, name: "a" });
      const annotations = cm.metadata?.annotations ?? {};
      assert.equal(annotations["configsync.gke.io/manager"], undefined, "Config Sync metadata left on an orphan");
      assert.equal(annotations["config.k8s.io/owning-inventory"], undefined);
      assert.equal(cm.metadata?.labels?.["app.kubernetes.io/managed-by"], undefined);
      assert.deepEqual(cm.data, { k: "v" });

      // Created again (Config Sync's TestReconcilerFinalizer_Orphan): it takes its objects back, deleting none.
      await createRootSync(name, repo);
      await synced(name, commit);
      const taken = await coreApi().readNamespacedConfigMap({ namespace, name: "a" });
      assert.equal(taken.metadata?.uid, cm.metadata?.uid, "the orphaned object was deleted and created again");
      assert.equal(taken.metadata?.annotations?.["config.k8s.io/owning-inventory"], inventoryId(rootNamespace, name));
    }
  });
}
