/**
 * The API server going away and coming back, with etcd compacted: a reconciler that keeps running
 * through it must delete nothing but what left Git, converge once the server is back, and keep
 * correcting drift through watches that had to relist. They run on a control plane of their own
 * (see usePrivateControlPlane), whose API server they stop.
 */
import { setTimeout as delay } from "node:timers/promises";
import { test } from "node:test";
import assert from "node:assert/strict";
import { createLogger } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import {
  restartProcess,
  usePrivateControlPlane,
  type PrivateControlPlane,
} from "../../support/private-control-plane.ts";
import { startApiProxy, type ProxiedRequest } from "./api-proxy.ts";

const plane = await usePrivateControlPlane();

const configMap = (namespace: string, name: string, data: Record<string, string>): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });

/**
 * Compacts etcd at its current revision (etcd's JSON gateway): every older revision is gone. `advance`
 * first writes a key outside the API server's prefix, so the revision moves past anything a watch saw,
 * a bookmark included.
 */
async function compactEtcd(planeOf: PrivateControlPlane, options: { advance?: boolean } = {}): Promise<number> {
  const base = planeOf.cluster.etcdUrl;
  const b64 = (text: string): string => Buffer.from(text).toString("base64");
  const answer = await fetch(`${base}/v3/kv/${options.advance === true ? "put" : "range"}`, {
    method: "POST",
    body: JSON.stringify(
      options.advance === true
        ? { key: b64("/driftless-test/advance"), value: b64(suffix()) }
        : { key: b64("/registry") },
    ),
  });
  const revision = Number(((await answer.json()) as { header: { revision: string } }).header.revision);
  const compacted = await fetch(`${base}/v3/kv/compaction`, {
    method: "POST",
    body: JSON.stringify({ revision: String(revision), physical: true }),
  });
  assert.ok(compacted.ok, await compacted.text());
  return revision;
}

const isWrite = (r: ProxiedRequest): boolean => ["POST", "PUT", "PATCH", "DELETE"].includes(r.method);
const isWatch = (r: ProxiedRequest): boolean => /(^|&)watch=(true|1)/.test(r.query);

async function data(namespace: string, name: string): Promise<Record<string, string> | undefined> {
  try {
    return (await coreApi().readNamespacedConfigMap({ namespace, name })).data ?? {};
  } catch {
    return undefined;
  }
}

test("the API server stopped for 20 s in the middle of an apply: only what left Git is deleted, and the same reconciler converges once it is back", async (t) => {
  const namespace = await testNamespace(t, "apidown");
  const name = `apidown-${suffix()}`;
  const proxy = await startApiProxy(t);
  const lines: string[] = [];
  const repo = await TestRepo.create(t);
  for (let i = 0; i < 60; i++) await repo.write(`config/cm-${i}.yaml`, configMap(namespace, `cm-${i}`, { v: "1" }));
  const first = await repo.commit("v1");
  await createRootSync(name, repo);
  await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    {
      kubeconfig: proxy.kubeconfig,
      log: createLogger({ test: t.name }, { level: "debug", write: (line) => void lines.push(line) }),
    },
  );
  await rootSynced(name, first);
  // Someone else's object beside ours: never ours to delete.
  await coreApi().createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: "not-managed" }, data: { a: "b" } },
  });

  // v2: change the first 20, drop the next 20, add 200.
  for (let i = 0; i < 20; i++) await repo.write(`config/cm-${i}.yaml`, configMap(namespace, `cm-${i}`, { v: "2" }));
  for (let i = 20; i < 40; i++) await repo.remove(`config/cm-${i}.yaml`);
  for (let i = 0; i < 200; i++) await repo.write(`config/new-${i}.yaml`, configMap(namespace, `new-${i}`, { v: "2" }));
  // The 10th write of v2's ConfigMaps waits while the API server stops; the rest of the apply meets the outage.
  const reached = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  let writes = 0;
  proxy.hold = (r) => {
    if (!isWrite(r) || !r.path.startsWith(`/api/v1/namespaces/${namespace}/configmaps`) || ++writes !== 10)
      return undefined;
    reached.resolve();
    return release.promise;
  };
  const second = await repo.commit("v2");
  await reached.promise;
  const outageStart = proxy.requests.length;
  await restartProcess(plane, "kube-apiserver", async () => {
    release.resolve();
    await eventually(() => proxy.requests.slice(outageStart).filter((r) => r.status === 0).length >= 20, {
      what: "the reconciler's requests failing",
    });
    // The outage's length, not synchronisation: passes and their retries run into it meanwhile.
    await delay(20_000);
  });
  proxy.hold = undefined;

  const status = await eventually(
    async () => {
      const s = await rootSyncStatus(name);
      return s["lastSyncedCommit"] === second ? s : undefined;
    },
    { timeoutMs: 120_000, what: "v2 synced after the API server came back" },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${lines.slice(-20).join("")}`);
  });
  assert.deepEqual((status["sync"] as JsonObject)["errors"] ?? [], []);
  // The passes the outage broke failed as retryable API server errors (KNV2002), not as anything to prune by.
  assert.ok(
    lines.some((l) => l.includes('"msg":"pass finished"') && l.includes('"code":"KNV2002"')),
    "no pass failed with KNV2002 during the outage",
  );

  const deleted = new Set(proxy.requests.filter((r) => r.method === "DELETE").map((r) => r.path));
  const prunable = new Set(
    Array.from({ length: 20 }, (_, i) => `/api/v1/namespaces/${namespace}/configmaps/cm-${i + 20}`),
  );
  for (const path of deleted) assert.ok(prunable.has(path), `DELETE ${path}: not something that left Git`);
  const { items } = await coreApi().listNamespacedConfigMap({ namespace });
  const live = new Map(items.map((cm) => [cm.metadata?.name ?? "", cm.data?.["v"]]));
  for (let i = 0; i < 20; i++) assert.equal(live.get(`cm-${i}`), "2", `cm-${i} not updated`);
  for (let i = 20; i < 40; i++) assert.equal(live.has(`cm-${i}`), false, `cm-${i} not pruned`);
  for (let i = 40; i < 60; i++) assert.equal(live.get(`cm-${i}`), "1", `cm-${i} lost`);
  for (let i = 0; i < 200; i++) assert.equal(live.get(`new-${i}`), "2", `new-${i} missing`);
  assert.ok(live.has("not-managed"), "an object nobody declared was deleted");
});

test("etcd compacted with watches open, then the API server restarted over a compaction: the watches relist once and drift made after is corrected, with no other write", async (t) => {
  const namespace = await testNamespace(t, "relist");
  const name = `relist-${suffix()}`;
  const proxy = await startApiProxy(t);
  const lines: string[] = [];
  const repo = await TestRepo.create(t);
  for (const cm of ["a", "b", "c"]) await repo.write(`config/${cm}.yaml`, configMap(namespace, cm, { v: "git" }));
  const first = await repo.commit("a, b, c");
  await createRootSync(name, repo);
  await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    {
      kubeconfig: proxy.kubeconfig,
      log: createLogger({ test: t.name }, { level: "debug", write: (line) => void lines.push(line) }),
    },
  );
  await rootSynced(name, first);

  // Compacted under open watches: the API server's watch cache goes on serving them.
  await compactEtcd(plane);
  await coreApi().patchNamespacedConfigMap({
    namespace,
    name: "c",
    body: [{ op: "replace", path: "/data/v", value: "drift" }],
  });
  await eventually(async () => (await data(namespace, "c"))?.["v"] === "git", { what: "c corrected" });

  // Compacted past every version the watches saw while the API server is down: they cannot resume.
  const restartedAt = proxy.requests.length;
  await restartProcess(plane, "kube-apiserver", async () => {
    await compactEtcd(plane, { advance: true });
  });

  await coreApi().patchNamespacedConfigMap({
    namespace,
    name: "a",
    body: [{ op: "replace", path: "/data/v", value: "drift" }],
  });
  await coreApi().deleteNamespacedConfigMap({ namespace, name: "b" });
  await eventually(
    async () => (await data(namespace, "a"))?.["v"] === "git" && (await data(namespace, "b"))?.["v"] === "git",
    { timeoutMs: 60_000, what: "a and b corrected after the restart" },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${lines.slice(-20).join("")}`);
  });

  const after = proxy.requests.slice(restartedAt);
  const writes = after.filter((r) => isWrite(r) && r.path.includes("/configmaps"));
  for (const w of writes)
    assert.match(w.path, new RegExp(`/namespaces/${namespace}/configmaps(/a|/b)?$`), `${w.method} ${w.path}`);
  assert.deepEqual(
    writes.filter((w) => w.method === "DELETE"),
    [],
  );
  // A relist, not a loop of them: lists the API server answered. Those tried while it was down failed, as
  // many as the informers' backoff fits into however long the restart took.
  const lists = after.filter(
    (r) => r.method === "GET" && r.path.endsWith("/configmaps") && !isWatch(r) && r.status === 200,
  );
  assert.ok(lists.length >= 1 && lists.length <= 5, `${lists.length} lists of ConfigMaps after the restart`);
  // Whether a re-watch meets the compaction (410) or the informer relists after its failed watches first
  // depends on how soon the restarted server answers; either way it lists once and drift is corrected.
});
