import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  statusCode,
  suffix,
  TestRepo,
} from "../../support/index.ts";

const json = (obj: unknown): string => JSON.stringify(obj);
const local = { "config.kubernetes.io/local-config": "true" };
const disabled = { "configmanagement.gke.io/managed": "disabled" };
const configMap = (namespace: string, annotations: Record<string, string> = {}): string =>
  json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace, annotations }, data: {} });

async function configMapExists(namespace: string): Promise<boolean> {
  try {
    await coreApi().readNamespacedConfigMap({ namespace, name: "settings" });
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

async function start(t: Parameters<typeof startReconciler>[0], prefix: string) {
  const id = suffix();
  const name = `${prefix}-${id}`;
  const ns = `${prefix}-ns-${id}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", json({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }));
  return { name, ns, repo };
}

test("a local-config object is never applied, and one that becomes local-config is pruned", async (t) => {
  const { name, ns, repo } = await start(t, "local");
  await repo.write("config/cm.yaml", configMap(ns, local));
  const first = await repo.commit("a local-config ConfigMap");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  assert.equal(await configMapExists(ns), false, "a local-config object was applied");

  await repo.write("config/cm.yaml", configMap(ns));
  await rootSynced(name, await repo.commit("no longer local"));
  assert.equal(await configMapExists(ns), true);

  await repo.write("config/cm.yaml", configMap(ns, local));
  await rootSynced(name, await repo.commit("local again"));
  assert.equal(await configMapExists(ns), false, "an object made local-config was not pruned");
});

test("a local-config object whose management was disabled first stays on the cluster, with or without the disable", async (t) => {
  const { name, ns, repo } = await start(t, "localoff");
  await repo.write("config/cm.yaml", configMap(ns));
  const first = await repo.commit("a managed ConfigMap");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  assert.equal(await configMapExists(ns), true);

  for (const [annotations, why] of [
    [disabled, "management disabled"],
    [{ ...disabled, ...local }, "disabled and local-config"],
    [local, "local-config only"],
  ] as const) {
    await repo.write("config/cm.yaml", configMap(ns, annotations));
    await rootSynced(name, await repo.commit(why));
    assert.equal(await configMapExists(ns), true, `the released ConfigMap went once ${why}`);
  }
});
