/**
 * `driftless.dev/suspend: "true"` on a RootSync pauses applying, pruning and drift correction while
 * status and metrics keep reporting what differs; removing it resumes at once. A suspended sync's
 * own deletion deletes nothing, even with Foreground.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { rsyncMapping } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncGone,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { adminClient, configMaps } from "../kube/support.ts";

const suspendKey = "driftless.dev/suspend";

function configMap(namespace: string, name: string, value: string): string {
  return JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { k: value } });
}

async function liveConfigMap(namespace: string, name: string): Promise<{ k?: string; managed: boolean } | undefined> {
  try {
    const cm = await coreApi().readNamespacedConfigMap({ namespace, name });
    return { k: cm.data?.["k"], managed: cm.metadata?.annotations?.["configsync.gke.io/manager"] !== undefined };
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

async function setSuspended(t: Parameters<typeof adminClient>[0], name: string, on: boolean): Promise<void> {
  const client = await adminClient(t);
  await client.patch(
    rsyncMapping("RootSync"),
    rootSyncNamespace,
    name,
    { metadata: { annotations: { [suspendKey]: on ? "true" : null } } },
    "merge",
  );
}

function suspendedCondition(status: JsonObject): JsonObject | undefined {
  return ((status["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Suspended");
}

/** The Suspended condition once its message satisfies `match`. */
async function suspendedWith(name: string, match: (message: string) => boolean, what: string): Promise<JsonObject> {
  let last: JsonObject | undefined;
  try {
    return await eventually(
      async () => {
        last = suspendedCondition(await rootSyncStatus(name));
        return last?.["status"] === "True" && match(String(last["message"])) ? last : undefined;
      },
      { timeoutMs: 60_000, what: `RootSync ${name}: Suspended condition ${what}` },
    );
  } catch (error) {
    throw new Error(`${String(error)}; last condition: ${JSON.stringify(last)}`, { cause: error });
  }
}

async function metricValue(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(series + " ") || l.startsWith(series.replace(/}$/, ",")));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

test("a suspended RootSync applies, prunes and corrects nothing, reports the drift, and resumes when the annotation goes", async (t) => {
  const name = `suspend-${suffix()}`;
  const ns = `suspend-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }));
  await repo.write("config/a.yaml", configMap(ns, "a", "declared"));
  await repo.write("config/b.yaml", configMap(ns, "b", "declared"));
  const first = await repo.commit("a namespace and two config maps");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { metricsPort: 0 },
  );
  await rootSynced(name, first);

  await setSuspended(t, name, true);
  await suspendedWith(name, (m) => m.includes("the cluster matches the source"), "saying nothing differs");
  const url = reconciler.metricsUrl!;
  // Metrics are recorded just after the status write that made the condition visible.
  await eventually(async () => (await metricValue(url, "driftless_sync_suspended")) === 1, {
    what: "driftless_sync_suspended 1 in /metrics",
  });

  // Drift is not corrected, but reported.
  await (await adminClient(t)).patch(configMaps, ns, "a", { data: { k: "edited by hand" } }, "merge");
  await suspendedWith(name, (m) => m.includes(`1 changed (ConfigMap ${ns}/a)`), "reporting the edited object");
  assert.equal((await liveConfigMap(ns, "a"))?.k, "edited by hand");

  // A new commit is read and compared, not applied: c stays missing, b stays although it left Git.
  await repo.remove("config/b.yaml");
  await repo.write("config/c.yaml", configMap(ns, "c", "declared"));
  const second = await repo.commit("b leaves, c arrives");
  const condition = await suspendedWith(
    name,
    (m) => m.includes(second) && /1 missing/.test(m) && /1 would be pruned/.test(m),
    "comparing the new commit",
  );
  assert.equal(condition["commit"], second);
  assert.equal(await liveConfigMap(ns, "c"), undefined);
  assert.equal((await liveConfigMap(ns, "b"))?.k, "declared");
  const status = await rootSyncStatus(name);
  assert.equal(status["lastSyncedCommit"], first, "nothing was synced while suspended");
  assert.equal((status["source"] as JsonObject)["commit"], second, "the source is still read");
  const syncing = ((status["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Syncing");
  assert.equal(syncing?.["reason"], "Suspended");
  await eventually(
    async () => (await metricValue(url, 'driftless_suspended_drift_objects{drift="would_prune"}')) === 1,
    {
      what: "the would-prune count in /metrics",
    },
  );

  // Resume: everything the suspension held back happens, and the condition goes.
  await setSuspended(t, name, false);
  await rootSynced(name, second);
  assert.equal((await liveConfigMap(ns, "a"))?.k, "declared");
  assert.equal(await liveConfigMap(ns, "b"), undefined);
  assert.equal((await liveConfigMap(ns, "c"))?.k, "declared");
  assert.equal(suspendedCondition(await rootSyncStatus(name)), undefined);
  await eventually(async () => (await metricValue(url, "driftless_sync_suspended")) === 0, {
    what: "driftless_sync_suspended 0 in /metrics",
  });
});

test("deleting a suspended RootSync with Foreground propagation deletes nothing: its objects are released", async (t) => {
  const name = `suspend-del-${suffix()}`;
  const ns = `suspend-del-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }));
  await repo.write("config/a.yaml", configMap(ns, "a", "declared"));
  const first = await repo.commit("a namespace and a config map");
  await createRootSync(name, repo, {
    annotations: { "configsync.gke.io/deletion-propagation-policy": "Foreground", [suspendKey]: "true" },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  // Suspended from the start: the source is compared, nothing is created.
  await suspendedWith(name, (m) => m.includes(first) && /2 missing/.test(m), "reporting two missing objects");
  assert.equal(await liveConfigMap(ns, "a"), undefined);

  // Resume to create them, suspend again, then delete the RootSync.
  await setSuspended(t, name, false);
  await rootSynced(name, first);
  await setSuspended(t, name, true);
  await suspendedWith(name, (m) => m.includes("the cluster matches the source"), "after suspending again");
  await customApi().deleteNamespacedCustomObject({ ...rootSyncs, name });
  await rootSyncGone(name);
  const kept = await liveConfigMap(ns, "a");
  assert.equal(kept?.k, "declared", "the suspended sync's deletion deleted its object");
  assert.equal(kept.managed, false, "the object is released");
});
