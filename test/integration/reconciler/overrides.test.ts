/**
 * spec.override fields a reconciler honours: reconcileTimeout (the wait after apply, as Config Sync's
 * applier does it), and apiServerTimeout and logLevels, which the manager hands its reconciler.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createLogger } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  syncErrorsAt,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import {
  configMap,
  createNamespace,
  createSync,
  reconcilerLog,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "../manager/helpers.ts";

const json = (obj: unknown): string => JSON.stringify(obj);

interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

test("a pass waits up to override.reconcileTimeout for what it wrote to become Current; a timeout is KNV2009 on status.sync and reconcile Timeout in the ResourceGroup until the object is Current", async (t) => {
  const id = suffix();
  const name = `rto-${id}`;
  const namespace = `rto-${id}`;
  const repo = await TestRepo.create(t);
  // No scheduler or kubelet here: a Deployment with a replica never becomes available.
  await repo.write("config/ns.yaml", json({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/web.yaml", json(deployment(namespace, 1)));
  await repo.write(
    "config/cm.yaml",
    json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "plain", namespace }, data: { a: "1" } }),
  );
  const commit = await repo.commit("a deployment that never becomes available");
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  await createRootSync(name, repo, { spec: { override: { reconcileTimeout: "3s" } } });
  const lines: LogLine[] = [];
  const log = createLogger(
    { test: t.name },
    { level: "debug", write: (line) => void lines.push(JSON.parse(line) as LogLine) },
  );
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { log });
  await rootSynced(name, commit);

  const timeout = lines.find((l) => l.msg.startsWith("reconcile timeout"));
  assert.ok(timeout !== undefined, `no reconcile timeout logged:\n${lines.map((l) => l.msg).join("\n")}`);
  assert.equal(timeout["timeoutMs"], 3_000);
  assert.deepEqual(timeout["objects"], [`apps/Deployment/${namespace}/web (InProgress)`]);
  const wait = lines.find((l) => l.msg === "pass phase finished" && l["phase"] === "wait");
  assert.ok(wait !== undefined && Number(wait["seconds"]) >= 2.9, `the pass did not wait: ${JSON.stringify(wait)}`);
  // The commit is applied (lastSyncedCommit moved), and the object that is not Current is an error.
  const errors = await syncErrorsAt(name, commit);
  assert.equal(errors.length, 1, JSON.stringify(errors));
  assert.equal(errors[0]?.["code"], "2009");
  assert.match(
    String(errors[0]?.["errorMessage"]),
    new RegExp(`failed to wait for Deployment\\.apps, ${namespace}/web: reconcile timeout.*InProgress`),
  );
  assert.ok(await configMapExists(namespace, "plain"), "the rest of the commit was applied");
  // The ResourceGroup says so too, as Config Sync's applier records a wait that ran out.
  await eventually(async () => (await groupEntry(name, "web"))?.["reconcile"] === "Timeout", {
    timeoutMs: 10_000,
    what: `reconcile Timeout on the Deployment's entry: ${JSON.stringify(await groupEntry(name, "web"))}`,
  });
  assert.equal((await groupEntry(name, "web"))?.["actuation"], "Succeeded");
  assert.equal((await groupEntry(name, "plain"))?.["reconcile"], "Succeeded");

  // Later passes leave the Deployment unchanged and do not wait for it again, but keep reporting it.
  const passes = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passes + 2, { timeoutMs: 30_000, what: "two more passes" });
  const still = ((await rootSyncStatus(name))["sync"] as JsonObject)["errors"] as JsonObject[] | undefined;
  assert.equal(still?.length, 1, "the timeout is still reported while the Deployment is not Current");
  const waits = lines.filter((l) => l.msg === "pass phase finished" && l["phase"] === "wait");
  assert.ok(Number(waits.at(-1)?.["seconds"]) < 1, `a later pass waited again: ${JSON.stringify(waits.at(-1))}`);
  // Nor do they write: their status says what the stored one says, which the API server hands back with
  // its keys in another order (that once rewrote the Syncing condition's lastUpdateTime on every pass).
  const writesBefore = reconciler.client.requests.writes();
  const counted = reconciler.passCount;
  await eventually(() => reconciler.passCount >= counted + 2, { timeoutMs: 30_000, what: "two idle passes" });
  assert.equal(reconciler.client.requests.writes() - writesBefore, 0, "a pass that changed nothing wrote");

  // Scaled to zero replicas, it becomes Current, and the error goes.
  await repo.write("config/web.yaml", json(deployment(namespace, 0)));
  const scaled = await repo.commit("no replicas");
  await rootSynced(name, scaled);
  const syncErrors = async (): Promise<JsonObject[]> =>
    (((await rootSyncStatus(name))["sync"] as JsonObject)["errors"] ?? []) as JsonObject[];
  await eventually(async () => (await syncErrors()).length === 0, {
    timeoutMs: 60_000,
    what: "the timeout error to clear once the Deployment is Current",
  });
  await eventually(async () => (await groupEntry(name, "web"))?.["reconcile"] === "Succeeded", {
    timeoutMs: 10_000,
    what: "reconcile Succeeded once the Deployment is Current",
  });
});

async function groupEntry(name: string, objectName: string): Promise<JsonObject | undefined> {
  const group = (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
  const statuses = ((group["status"] as JsonObject | undefined)?.["resourceStatuses"] ?? []) as JsonObject[];
  return statuses.find((s) => s["name"] === objectName);
}

function deployment(namespace: string, replicas: number): unknown {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } },
    },
  };
}

async function configMapExists(namespace: string, name: string): Promise<boolean> {
  try {
    await coreApi().readNamespacedConfigMap({ namespace, name });
    return true;
  } catch {
    return false;
  }
}

test("the manager hands override.apiServerTimeout and the reconciler container's logLevels to its reconciler", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "ovr");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", target, { v: "1" }));
  const commit = await repo.commit("one config map");
  const name = `root-${suffix()}`;
  await createSync(
    t,
    rootSyncObject(
      name,
      manager.scope,
      { repo: repo.url, branch: repo.branch },
      {},
      { apiServerTimeout: "7s", logLevels: [{ containerName: "reconciler", logLevel: 0 }] },
    ),
  );
  await synced("RootSync", systemNamespace, name, commit);
  const lines = (await reconcilerLog(manager.scope, `root-reconciler-${name}`))
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine);
  const started = lines.find((l) => l.msg === "reconciler started");
  assert.equal(started?.["apiServerTimeoutMs"], 7_000, "the API server timeout did not reach the reconciler");
  // The test manager logs at debug; the reconciler container's verbosity 0 is info, and wins.
  assert.ok(lines.length > 0, "no reconciler log");
  assert.deepEqual(
    lines.filter((l) => l.level === "debug").map((l) => l.msg),
    [],
    "debug lines despite logLevel 0",
  );
});
