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

async function exists(namespace: string, name: string): Promise<boolean> {
  try {
    await coreApi().readNamespacedConfigMap({ namespace, name });
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

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
  await repo.write(
    "config/system/repo.yaml",
    json({
      apiVersion: "configmanagement.gke.io/v1",
      kind: "Repo",
      metadata: { name: "repo" },
      spec: { version: "1.0.0" },
    }),
  );
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
