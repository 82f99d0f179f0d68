import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  startReconciler,
  statusCode,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const json = (obj: unknown): string => JSON.stringify(obj);
const namespace = (
  name: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): string => json({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels, annotations } });
const configMap = (name: string, annotations: Record<string, string> = {}, ns?: string): string =>
  json({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, annotations, ...(ns ? { namespace: ns } : {}) },
    data: {},
  });
const namespaceSelector = (name: string, spec: JsonObject): string =>
  json({ apiVersion: "configmanagement.gke.io/v1", kind: "NamespaceSelector", metadata: { name }, spec });
const selectedBy = (selector: string): Record<string, string> => ({
  "configmanagement.gke.io/namespace-selector": selector,
});

function cleanUpNamespaces(t: TestContext, names: readonly string[]): void {
  t.after(async () => {
    for (const name of names)
      await coreApi()
        .deleteNamespace({ name })
        .catch(() => undefined);
  });
}

/** Whether `read` finds its object: false on a 404, any other failure thrown. */
async function found(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

const exists = (namespace: string, name: string): Promise<boolean> =>
  found(() => coreApi().readNamespacedConfigMap({ namespace, name }));

const namespaceGone = async (name: string): Promise<true | undefined> =>
  !(await found(() => coreApi().readNamespace({ name }))) || undefined;

/** The Repo object a hierarchy's system/ declares. */
const repoObject = json({
  apiVersion: "configmanagement.gke.io/v1",
  kind: "Repo",
  metadata: { name: "repo" },
  spec: { version: "1.0.0" },
});

test("an unstructured NamespaceSelector copies an object into the one of two declared namespaces it selects", async (t) => {
  const id = suffix();
  const name = `nssel-${id}`;
  const [prod, dev] = [`prod-${id}`, `dev-${id}`];
  cleanUpNamespaces(t, [prod, dev]);
  const repo = await TestRepo.create(t);
  await repo.write("config/prod.yaml", namespace(prod, { env: "prod" }));
  await repo.write("config/dev.yaml", namespace(dev, { env: "dev" }));
  await repo.write("config/selector.yaml", namespaceSelector("prod", { selector: { matchLabels: { env: "prod" } } }));
  await repo.write("config/cm.yaml", configMap("settings", selectedBy("prod")));
  const commit = await repo.commit("a static selector");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);

  assert.ok(await exists(prod, "settings"));
  assert.ok(!(await exists(dev, "settings")));
  // As Config Sync's reconciler: a source that never selected dynamically does not carry the annotation.
  assert.equal(await dynamicAnnotation(name), undefined, "dynamic-ns-selector-enabled on a static source");
});

/** Config Sync's `configsync.gke.io/dynamic-ns-selector-enabled` on the RootSync, as its reconciler writes it. */
async function dynamicAnnotation(name: string): Promise<string | undefined> {
  const sync = (await customApi().getNamespacedCustomObject({ ...rootSyncs, name })) as {
    metadata?: { annotations?: Record<string, string> };
  };
  return sync.metadata?.annotations?.["configsync.gke.io/dynamic-ns-selector-enabled"];
}

test("a dynamic NamespaceSelector follows the cluster's namespace labels: relabelling moves the object to the newly selected namespace and prunes it from the other", async (t) => {
  const id = suffix();
  const name = `nsdyn-${id}`;
  const [first, second] = [`first-${id}`, `second-${id}`];
  cleanUpNamespaces(t, [first, second]);
  // Namespaces made by hand, not by the source: only a dynamic selector sees them.
  await coreApi().createNamespace({ body: { metadata: { name: first, labels: { [`sel-${id}`]: "on" } } } });
  await coreApi().createNamespace({ body: { metadata: { name: second, labels: { [`sel-${id}`]: "off" } } } });
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/selector.yaml",
    namespaceSelector("on", { mode: "dynamic", selector: { matchLabels: { [`sel-${id}`]: "on" } } }),
  );
  await repo.write("config/cm.yaml", configMap("follows", selectedBy("on")));
  const commit = await repo.commit("a dynamic selector");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  const namespaceWatch = (reconciler as unknown as { parts: { namespaceWatch: { watching: boolean } } }).parts
    .namespaceWatch;
  await rootSynced(name, commit);
  assert.equal(namespaceWatch.watching, true);
  assert.ok(await exists(first, "follows"));
  assert.ok(!(await exists(second, "follows")));
  assert.equal(await dynamicAnnotation(name), "true");

  const relabel = async (ns: string, value: string): Promise<void> => {
    const live = await coreApi().readNamespace({ name: ns });
    live.metadata = { ...live.metadata, labels: { ...live.metadata?.labels, [`sel-${id}`]: value } };
    await coreApi().replaceNamespace({ name: ns, body: live });
  };
  await relabel(second, "on");
  await relabel(first, "off");
  await eventually(
    async () => ((await exists(second, "follows")) && !(await exists(first, "follows")) ? true : undefined),
    {
      timeoutMs: 60_000,
      what: "the ConfigMap to move from the deselected namespace to the selected one",
    },
  );
  // No namespace selected at all: the object goes (the user's choice), not refused as an emptied source.
  await relabel(second, "off");
  await eventually(async () => ((await exists(second, "follows")) ? undefined : true), {
    timeoutMs: 60_000,
    what: "the ConfigMap removed once its last namespace is deselected",
  });

  // The selector made static: the annotation is turned off, not removed, as Config Sync's reconciler does.
  await repo.write(
    "config/selector.yaml",
    namespaceSelector("on", { selector: { matchLabels: { [`sel-${id}`]: "on" } } }),
  );
  const made = await repo.commit("a static selector");
  await rootSynced(name, made);
  assert.equal(await dynamicAnnotation(name), "false");
  // Nothing selects from the cluster's Namespaces any more: they are no longer watched.
  assert.equal(namespaceWatch.watching, false, "the Namespace watch outlived the dynamic selector");
});

test("a hierarchy applies an object by ClusterSelector and cluster-name-selector only on the cluster the reconciler is named after, and a NamespaceSelector picks one of two namespaces", async (t) => {
  const id = suffix();
  const name = `clsel-${id}`;
  const [prod, dev] = [`prod-${id}`, `dev-${id}`];
  const eng = `eng-${id}`;
  cleanUpNamespaces(t, [prod, dev]);
  const repo = await TestRepo.create(t);
  await repo.write("config/system/repo.yaml", repoObject);
  const cluster = (clusterName: string, env: string): string =>
    json({
      apiVersion: "clusterregistry.k8s.io/v1alpha1",
      kind: "Cluster",
      metadata: { name: clusterName, labels: { env } },
    });
  await repo.write("config/clusterregistry/east.yaml", cluster(`east-${id}`, "prod"));
  await repo.write("config/clusterregistry/west.yaml", cluster(`west-${id}`, "dev"));
  await repo.write(
    "config/clusterregistry/selector.yaml",
    json({
      apiVersion: "configmanagement.gke.io/v1",
      kind: "ClusterSelector",
      metadata: { name: "prod-clusters" },
      spec: { selector: { matchLabels: { env: "prod" } } },
    }),
  );
  await repo.write(
    `config/namespaces/${eng}/selector.yaml`,
    namespaceSelector("prod", { selector: { matchLabels: { env: "prod" } } }),
  );
  await repo.write(`config/namespaces/${eng}/inherited.yaml`, configMap("inherited", selectedBy("prod")));
  await repo.write(`config/namespaces/${eng}/${prod}/namespace.yaml`, namespace(prod, { env: "prod" }));
  await repo.write(`config/namespaces/${eng}/${dev}/namespace.yaml`, namespace(dev, { env: "dev" }));
  await repo.write(
    `config/namespaces/${eng}/${prod}/on-prod-clusters.yaml`,
    configMap("on-prod-clusters", { "configmanagement.gke.io/cluster-selector": "prod-clusters" }),
  );
  await repo.write(
    `config/namespaces/${eng}/${prod}/on-west.yaml`,
    configMap("on-west", { "configsync.gke.io/cluster-name-selector": `west-${id}` }),
  );
  await repo.write(
    `config/namespaces/${eng}/${dev}/on-east.yaml`,
    configMap("on-east", { "configsync.gke.io/cluster-name-selector": `north-${id}, east-${id}` }),
  );
  const commit = await repo.commit("cluster and namespace selectors");
  await createRootSync(name, repo, { spec: { sourceFormat: "hierarchy" } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { clusterName: `east-${id}` });
  await rootSynced(name, commit);

  assert.ok(await exists(prod, "inherited"));
  assert.ok(!(await exists(dev, "inherited")));
  assert.ok(await exists(prod, "on-prod-clusters"));
  assert.ok(!(await exists(prod, "on-west")));
  assert.ok(await exists(dev, "on-east"));
});

async function inventory(name: string): Promise<string[]> {
  const group = (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
  const resources = ((group["spec"] as JsonObject | undefined)?.["resources"] ?? []) as JsonObject[];
  return resources
    .map((r) => `${String(r["kind"])} ${r["namespace"] ? `${String(r["namespace"])}/` : ""}${String(r["name"])}`)
    .sort();
}

test("a dynamic NamespaceSelector takes in a Namespace created later and lets go of it once deleted: the inventory follows, and the sync reports no error", async (t) => {
  const id = suffix();
  const name = `nslife-${id}`;
  const [book, shoe] = [`book-${id}`, `shoe-${id}`];
  cleanUpNamespaces(t, [book, shoe]);
  const repo = await TestRepo.create(t);
  await repo.write("config/shoe.yaml", namespace(shoe, { app: shoe }));
  await repo.write(
    "config/book-selector.yaml",
    namespaceSelector("book", { mode: "dynamic", selector: { matchLabels: { app: book } } }),
  );
  await repo.write(
    "config/shoe-selector.yaml",
    namespaceSelector("shoe", { selector: { matchLabels: { app: shoe } } }),
  );
  await repo.write("config/cm-book.yaml", configMap("cm-book", selectedBy("book")));
  await repo.write("config/cm-shoe.yaml", configMap("cm-shoe", selectedBy("shoe")));
  const commit = await repo.commit("a dynamic selector of a namespace not there yet");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);
  const declaredOnly = [`ConfigMap ${shoe}/cm-shoe`, `Namespace ${shoe}`];
  assert.deepEqual(await inventory(name), declaredOnly);

  await coreApi().createNamespace({ body: { metadata: { name: book, labels: { app: book } } } });
  await eventually(
    async () =>
      ((await exists(book, "cm-book")) && (await inventory(name)).includes(`ConfigMap ${book}/cm-book`)) || undefined,
    { timeoutMs: 60_000, what: "the ConfigMap applied in the new namespace and recorded in the inventory" },
  );
  assert.ok(!(await exists(book, "cm-shoe")));

  await coreApi().deleteNamespace({ name: book });
  await eventually(async () => (await inventory(name)).join() === declaredOnly.join() || undefined, {
    timeoutMs: 60_000,
    what: "the deleted namespace's ConfigMap to leave the inventory",
  });
  await eventually(() => namespaceGone(book), { timeoutMs: 60_000, what: `Namespace ${book} to be gone` });
  const status = await rootSynced(name, commit);
  for (const step of ["source", "rendering", "sync"]) {
    const errors = ((status[step] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];
    assert.deepEqual(errors, [], `status.${step}.errors after the namespace was deleted`);
  }
});

test("a hierarchy Namespace and a CRD a commit deselects for this cluster are pruned, the Namespace with all in it, and come back once selected again", async (t) => {
  const id = suffix();
  const name = `clns-${id}`;
  const [backend, clusterName] = [`backend-${id}`, `prod-${id}`];
  const crdName = `anvils${id}.acme.com`;
  cleanUpNamespaces(t, [backend]);
  t.after(() =>
    customApi()
      .deleteClusterCustomObject({
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
        name: crdName,
      })
      .catch(() => undefined),
  );
  const crd = (annotations: Record<string, string>): string =>
    json({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: crdName, annotations },
      spec: {
        group: "acme.com",
        names: { plural: `anvils${id}`, singular: `anvil${id}`, kind: `Anvil${id}` },
        scope: "Namespaced",
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    });
  const onThisCluster = { "configsync.gke.io/cluster-name-selector": clusterName };
  const onTestClusters = { "configmanagement.gke.io/cluster-selector": "test-clusters" };
  const repo = await TestRepo.create(t);
  await repo.write("config/system/repo.yaml", repoObject);
  await repo.write(
    "config/clusterregistry/selector.yaml",
    json({
      apiVersion: "configmanagement.gke.io/v1",
      kind: "ClusterSelector",
      metadata: { name: "test-clusters" },
      spec: { selector: { matchLabels: { env: "test" } } },
    }),
  );
  const write = async (
    nsAnnotations: Record<string, string>,
    cmAnnotations: Record<string, string>,
    crdAnnotations: Record<string, string>,
  ) => {
    await repo.write(`config/namespaces/eng/${backend}/namespace.yaml`, namespace(backend, {}, nsAnnotations));
    await repo.write(`config/namespaces/eng/${backend}/cm.yaml`, configMap("settings", cmAnnotations));
    await repo.write("config/cluster/crd.yaml", crd(crdAnnotations));
  };
  const crdExists = (): Promise<boolean> =>
    found(() =>
      customApi().getClusterCustomObject({
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
        name: crdName,
      }),
    );

  await write(onThisCluster, onThisCluster, onThisCluster);
  const selected = await repo.commit("everything on this cluster");
  await createRootSync(name, repo, { spec: { sourceFormat: "hierarchy" } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { clusterName });
  await rootSynced(name, selected);
  assert.ok(await exists(backend, "settings"));
  assert.ok(await crdExists());

  await write(onTestClusters, onThisCluster, onTestClusters);
  await rootSynced(name, await repo.commit("the Namespace and the CRD only on test clusters"));
  await eventually(() => namespaceGone(backend), { timeoutMs: 60_000, what: "the deselected Namespace to be deleted" });
  await eventually(async () => !(await crdExists()) || undefined, { what: "the deselected CRD to be deleted" });

  // An unselected Namespace takes along even what selects this cluster or selects nothing.
  await write(onTestClusters, {}, onTestClusters);
  await rootSynced(name, await repo.commit("the ConfigMap without a selector"));
  assert.equal(await namespaceGone(backend), true);

  await write(onThisCluster, {}, onThisCluster);
  await rootSynced(name, await repo.commit("back on this cluster"));
  assert.ok(await exists(backend, "settings"));
  assert.ok(await crdExists());
});

test("a reconciler restarted under another cluster name applies, at the same commit, the declaration selected for the new name in place of the old one's", async (t) => {
  const id = suffix();
  const name = `clrename-${id}`;
  const frontend = `frontend-${id}`;
  const [prodName, testName] = [`prod-${id}`, `test-${id}`];
  cleanUpNamespaces(t, [frontend]);
  const quota = (pods: string, annotations: Record<string, string>): string =>
    json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "pod-quota", annotations }, data: { pods } });
  const repo = await TestRepo.create(t);
  await repo.write("config/system/repo.yaml", repoObject);
  await repo.write(
    "config/clusterregistry/cluster-test.yaml",
    json({
      apiVersion: "clusterregistry.k8s.io/v1alpha1",
      kind: "Cluster",
      metadata: { name: testName, labels: { environment: "test" } },
    }),
  );
  await repo.write(
    "config/clusterregistry/selector-test.yaml",
    json({
      apiVersion: "configmanagement.gke.io/v1",
      kind: "ClusterSelector",
      metadata: { name: "selector-env-test" },
      spec: { selector: { matchLabels: { environment: "test" } } },
    }),
  );
  await repo.write(`config/namespaces/eng/${frontend}/namespace.yaml`, namespace(frontend));
  await repo.write(
    `config/namespaces/eng/${frontend}/quota-inline.yaml`,
    quota("133", { "configsync.gke.io/cluster-name-selector": prodName }),
  );
  await repo.write(
    `config/namespaces/eng/${frontend}/quota-legacy.yaml`,
    quota("266", { "configmanagement.gke.io/cluster-selector": "selector-env-test" }),
  );
  const commit = await repo.commit("one quota per cluster");
  await createRootSync(name, repo, { spec: { sourceFormat: "hierarchy" } });
  const identity = { kind: "RootSync", namespace: rootSyncNamespace, name } as const;
  const pods = async (): Promise<string | undefined> =>
    (await coreApi().readNamespacedConfigMap({ namespace: frontend, name: "pod-quota" })).data?.["pods"];

  let reconciler = await startReconciler(t, identity, { clusterName: prodName });
  await rootSynced(name, commit);
  assert.equal(await pods(), "133");

  for (const [clusterName, expected] of [
    [testName, "266"],
    [prodName, "133"],
  ] as const) {
    await reconciler.stop(5_000);
    reconciler = await startReconciler(t, identity, { clusterName });
    await eventually(async () => (await pods()) === expected || undefined, {
      timeoutMs: 60_000,
      what: `the quota selected for ${clusterName} (pods ${expected})`,
    });
  }
});
