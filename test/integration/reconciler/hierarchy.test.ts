import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const json = (obj: unknown): string => JSON.stringify(obj);
const namespace = (name: string, labels: Record<string, string> = {}): string =>
  json({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels } });
const configMap = (name: string, data: Record<string, string> = {}, ns?: string): string =>
  json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...(ns ? { namespace: ns } : {}) }, data });
const repoObject = json({
  apiVersion: "configmanagement.gke.io/v1",
  kind: "Repo",
  metadata: { name: "repo" },
  spec: { version: "1.0.0" },
});

/** A RootSync following `config/`; `spec` is merged over it, and sourceFormat is left out unless given. */
async function createSync(t: TestContext, name: string, repo: TestRepo, spec: JsonObject = {}): Promise<void> {
  await coreApi()
    .createNamespace({ body: { metadata: { name: rootSyncNamespace } } })
    .catch((error: unknown) => {
      if (statusCode(error) !== 409) throw error;
    });
  await customApi().createNamespacedCustomObject({
    ...rootSyncs,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name, namespace: rootSyncNamespace },
      spec: { git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none" }, ...spec },
    },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
}

function cleanUpNamespaces(t: TestContext, names: readonly string[]): void {
  t.after(async () => {
    for (const name of names)
      await coreApi()
        .deleteNamespace({ name })
        .catch(() => undefined);
  });
}

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

async function missing(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return false;
  } catch (error) {
    if (statusCode(error) === 404) return true;
    throw error;
  }
}

/** The source errors once the source step reports `commit`. */
function sourceErrorsAt(name: string, commit: string): Promise<JsonObject[]> {
  return eventually(
    async () => {
      const source = (await rootSyncStatus(name))["source"] as JsonObject | undefined;
      const errors = (source?.["errors"] ?? []) as JsonObject[];
      return source?.["commit"] === commit && errors.length > 0 ? errors : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report source errors at ${commit.slice(0, 7)}` },
  );
}

test("a RootSync without sourceFormat reads its repository as a hierarchy: abstract namespaces are inherited, cluster/ is cluster-scoped, nothing else is read", async (t) => {
  const id = suffix();
  const name = `hier-${id}`;
  const [web, api, ops] = [`web-${id}`, `api-${id}`, `ops-${id}`];
  const eng = `eng-${id}`;
  cleanUpNamespaces(t, [web, api, ops]);
  t.after(async () => {
    await customApi()
      .deleteClusterCustomObject({
        group: "rbac.authorization.k8s.io",
        version: "v1",
        plural: "clusterroles",
        name: `reader-${id}`,
      })
      .catch(() => undefined);
  });
  const repo = await TestRepo.create(t);
  await repo.write("config/system/repo.yaml", repoObject);
  await repo.write(
    "config/cluster/reader.yaml",
    json({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: `reader-${id}` },
      rules: [],
    }),
  );
  await repo.write("config/namespaces/everywhere.yaml", configMap("everywhere", { scope: "all" }));
  await repo.write(`config/namespaces/${eng}/eng.yaml`, configMap("eng", { scope: "eng" }));
  await repo.write(`config/namespaces/${eng}/${web}/namespace.yaml`, namespace(web, { team: "web" }));
  await repo.write(`config/namespaces/${eng}/${api}/namespace.yaml`, namespace(api));
  await repo.write(`config/namespaces/${eng}/${api}/own.yaml`, configMap("own", { scope: "api" }));
  await repo.write(`config/namespaces/${ops}/namespace.yaml`, namespace(ops));
  // Outside the four directories: never read in a hierarchy.
  await repo.write("config/stray.yaml", configMap("stray", {}, ops));
  const commit = await repo.commit("a hierarchy");

  await createSync(t, name, repo);
  await rootSynced(name, commit);

  assert.deepEqual(await inventory(name), [
    `ClusterRole reader-${id}`,
    `ConfigMap ${api}/eng`,
    `ConfigMap ${api}/everywhere`,
    `ConfigMap ${api}/own`,
    `ConfigMap ${ops}/everywhere`,
    `ConfigMap ${web}/eng`,
    `ConfigMap ${web}/everywhere`,
    `Namespace ${api}`,
    `Namespace ${ops}`,
    `Namespace ${web}`,
  ]);
  const inherited = await coreApi().readNamespacedConfigMap({ namespace: web, name: "eng" });
  assert.deepEqual(inherited.data, { scope: "eng" });
  assert.equal(
    inherited.metadata?.annotations?.["configmanagement.gke.io/source-path"],
    `config/namespaces/${eng}/eng.yaml`,
  );
  const webNamespace = await coreApi().readNamespace({ name: web });
  assert.equal(webNamespace.metadata?.labels?.["team"], "web");
  assert.equal(webNamespace.metadata?.labels?.[`${eng}.tree.hnc.x-k8s.io/depth`], "1");
  assert.equal(webNamespace.metadata?.labels?.[`${web}.tree.hnc.x-k8s.io/depth`], "0");
  assert.equal(webNamespace.metadata?.annotations?.["hnc.x-k8s.io/managed-by"], "configmanagement.gke.io");
  assert.ok(await missing(() => coreApi().readNamespacedConfigMap({ namespace: ops, name: "stray" })));
});

test("a hierarchy error is reported with its code and file, and nothing of that commit is applied or pruned", async (t) => {
  const id = suffix();
  const name = `hier-err-${id}`;
  const web = `web-${id}`;
  cleanUpNamespaces(t, [web]);
  const repo = await TestRepo.create(t);
  await repo.write("config/system/repo.yaml", repoObject);
  await repo.write(`config/namespaces/${web}/namespace.yaml`, namespace(web));
  await repo.write(`config/namespaces/${web}/kept.yaml`, configMap("kept"));
  const first = await repo.commit("valid");
  await createSync(t, name, repo, { sourceFormat: "hierarchy" });
  await rootSynced(name, first);

  // The Namespace's name no longer matches its directory (KNV1020); a new object comes with it, and kept.yaml goes.
  await repo.write(`config/namespaces/${web}/namespace.yaml`, namespace(`other-${id}`));
  await repo.write(`config/namespaces/${web}/added.yaml`, configMap("added"));
  await repo.remove(`config/namespaces/${web}/kept.yaml`);
  const broken = await repo.commit("namespace renamed without its directory");
  const errors = await sourceErrorsAt(name, broken);
  assert.equal(errors[0]?.["code"], "1020", json(errors));
  assert.match(String(errors[0]?.["errorMessage"]), new RegExp(`namespaces/${web}/namespace\\.yaml`));
  const resources = (errors[0]?.["errorResources"] ?? []) as JsonObject[];
  // From the repository root, as Config Sync fills it from the source-path annotation (the sync's dir is "config").
  assert.equal(resources[0]?.["sourcePath"], `config/namespaces/${web}/namespace.yaml`);

  assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], first);
  await coreApi().readNamespacedConfigMap({ namespace: web, name: "kept" });
  assert.ok(await missing(() => coreApi().readNamespacedConfigMap({ namespace: web, name: "added" })));
  assert.ok(await missing(() => coreApi().readNamespace({ name: `other-${id}` })));
});

test("namespaceStrategy implicit creates a Namespace the source only uses, and it survives the removal of the objects that used it", async (t) => {
  const id = suffix();
  const name = `implicit-${id}`;
  const used = `used-${id}`;
  cleanUpNamespaces(t, [used]);
  const repo = await TestRepo.create(t);
  await repo.write("config/cm.yaml", configMap("in-undeclared", { a: "1" }, used));
  const first = await repo.commit("an object in an undeclared namespace");
  await createSync(t, name, repo, { sourceFormat: "unstructured" });
  await rootSynced(name, first);

  const created = await coreApi().readNamespace({ name: used });
  assert.equal(created.metadata?.annotations?.["client.lifecycle.config.k8s.io/deletion"], "detach");
  assert.equal(created.metadata?.annotations?.["configsync.gke.io/manager"], `:root_${name}`);
  assert.deepEqual(await inventory(name), [`ConfigMap ${used}/in-undeclared`, `Namespace ${used}`]);

  await repo.remove("config/cm.yaml");
  await repo.write("config/other.yaml", configMap("elsewhere", {}, "default"));
  const second = await repo.commit("the object leaves");
  await rootSynced(name, second);
  assert.ok(await missing(() => coreApi().readNamespacedConfigMap({ namespace: used, name: "in-undeclared" })));
  const survived = await coreApi().readNamespace({ name: used });
  assert.equal(survived.metadata?.deletionTimestamp, undefined);
  assert.equal(survived.metadata?.annotations?.["configsync.gke.io/manager"], undefined, "still managed");
  assert.ok(!(await inventory(name)).includes(`Namespace ${used}`));
});

test("namespaceStrategy explicit creates no Namespace: an object in an undeclared one fails to apply (KNV2009) until it exists", async (t) => {
  const id = suffix();
  const name = `explicit-${id}`;
  const absent = `absent-${id}`;
  cleanUpNamespaces(t, [absent]);
  const repo = await TestRepo.create(t);
  await repo.write("config/cm.yaml", configMap("waits", {}, absent));
  const commit = await repo.commit("an object in an undeclared namespace");
  await createSync(t, name, repo, { sourceFormat: "unstructured", override: { namespaceStrategy: "explicit" } });

  const errors = await eventually(
    async () => {
      const sync = (await rootSyncStatus(name))["sync"] as JsonObject | undefined;
      const found = (sync?.["errors"] ?? []) as JsonObject[];
      return sync?.["commit"] === commit && found.length > 0 ? found : undefined;
    },
    { timeoutMs: 60_000, what: "the apply error" },
  );
  assert.equal(errors[0]?.["code"], "2009", json(errors));
  // Config Sync's words (its namespace strategy e2e test): the object, then the server's message.
  assert.ok(
    String(errors[0]?.["errorMessage"]).includes(
      `failed to apply ConfigMap, ${absent}/waits: namespaces "${absent}" not found`,
    ),
    json(errors),
  );
  const [resource] = (errors[0]?.["errorResources"] ?? []) as JsonObject[];
  assert.equal(
    resource?.["sourcePath"],
    "config/cm.yaml",
    "the file from the repository root, as Config Sync names it",
  );
  assert.ok(await missing(() => coreApi().readNamespace({ name: absent })));

  // Someone else creates it: the next pass applies into it and leaves the Namespace alone.
  await coreApi().createNamespace({ body: { metadata: { name: absent } } });
  await rootSynced(name, commit);
  const ns = await coreApi().readNamespace({ name: absent });
  assert.equal(ns.metadata?.annotations?.["configsync.gke.io/manager"], undefined);
  assert.deepEqual(await inventory(name), [`ConfigMap ${absent}/waits`]);
});

test("a detached Namespace of a hierarchy leaves management with none of Config Sync's metadata, hnc.x-k8s.io/managed-by included", async (t) => {
  const id = suffix();
  const name = `detach-${id}`;
  const shipping = `shipping-${id}`;
  const other = `other-${id}`;
  cleanUpNamespaces(t, [shipping, other]);
  const repo = await TestRepo.create(t);
  await repo.write("config/system/repo.yaml", repoObject);
  await repo.write(
    `config/namespaces/${shipping}/ns.yaml`,
    json({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: shipping, annotations: { "client.lifecycle.config.k8s.io/deletion": "detach" } },
    }),
  );
  await repo.write(`config/namespaces/${shipping}/cm.yaml`, configMap("cm"));
  await repo.write(`config/namespaces/${other}/ns.yaml`, namespace(other));
  const first = await repo.commit("a namespace marked detach");
  await createSync(t, name, repo);
  await rootSynced(name, first);
  const managed = await coreApi().readNamespace({ name: shipping });
  assert.equal(managed.metadata?.annotations?.["hnc.x-k8s.io/managed-by"], "configmanagement.gke.io");

  await repo.remove(`config/namespaces/${shipping}`);
  const second = await repo.commit("remove it");
  await rootSynced(name, second);
  // TestPreventDeletionNamespace: kept, its contents pruned, and no Config Sync metadata left on it.
  const kept = await coreApi().readNamespace({ name: shipping });
  assert.equal(kept.metadata?.deletionTimestamp, undefined);
  assert.equal(kept.metadata?.annotations?.["client.lifecycle.config.k8s.io/deletion"], "detach");
  const left = [
    ...Object.entries(kept.metadata?.annotations ?? {}).filter(
      ([k, v]) =>
        k.startsWith("configmanagement.gke.io/") ||
        k.startsWith("configsync.gke.io/") ||
        k === "config.k8s.io/owning-inventory" ||
        (k === "hnc.x-k8s.io/managed-by" && v === "configmanagement.gke.io"),
    ),
    ...Object.entries(kept.metadata?.labels ?? {}).filter(
      ([k, v]) =>
        k.startsWith("configsync.gke.io/") ||
        k === "applyset.kubernetes.io/part-of" ||
        (k === "app.kubernetes.io/managed-by" && v === "configmanagement.gke.io"),
    ),
  ];
  assert.deepEqual(left, [], "Config Sync metadata left on the detached Namespace");
  assert.ok(await missing(() => coreApi().readNamespacedConfigMap({ namespace: shipping, name: "cm" })));
});
