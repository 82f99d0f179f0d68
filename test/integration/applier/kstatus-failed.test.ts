/**
 * kstatus on the real control plane: a Deployment past its progress deadline is Failed, as cli-utils'
 * kstatus reads it. The pass stops waiting for it (Config Sync's wait ends at ReconcileFailed, with no
 * error after an apply), and its ResourceGroup entry carries the Stalled condition kstatus gives it.
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
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

interface LogLine {
  readonly msg: string;
  readonly [field: string]: unknown;
}

test("a Deployment past its progressDeadlineSeconds is Failed in its ResourceGroup entry, with kstatus's Stalled condition, and the pass does not wait out reconcileTimeout", async (t) => {
  const id = suffix();
  const name = `kst-${id}`;
  const namespace = `kst-${id}`;
  const repo = await TestRepo.create(t);
  // No kubelet here: the Deployment's pod never runs, so the controller marks it ProgressDeadlineExceeded.
  await repo.write(
    "config/ns.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  );
  await repo.write("config/web.yaml", JSON.stringify(deployment(namespace)));
  const commit = await repo.commit("a deployment that misses its progress deadline");
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  await createRootSync(name, repo, { spec: { override: { reconcileTimeout: "10m" } } });
  const lines: LogLine[] = [];
  const log = createLogger(
    { test: t.name },
    { level: "debug", write: (line) => void lines.push(JSON.parse(line) as LogLine) },
  );
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { log });

  // Synced well inside the 10 minutes, with no KNV2009: a Failed object is done, not timed out.
  await rootSynced(name, commit);
  const wait = lines.find((l) => l.msg === "pass phase finished" && l["phase"] === "wait");
  assert.ok(wait !== undefined && Number(wait["seconds"]) < 60, `the pass waited: ${JSON.stringify(wait)}`);
  assert.equal(
    lines.find((l) => l.msg.startsWith("reconcile timeout")),
    undefined,
    "a reconcile timeout was logged",
  );
  const sync = (await rootSyncStatus(name))["sync"] as JsonObject;
  assert.deepEqual(sync["errors"] ?? [], [], "a Failed object is no error on status.sync");

  const group = await eventually(
    async () => {
      const found = await resourceGroup(name);
      const entry = entries(found).find((e) => e["name"] === "web");
      return entry?.["status"] === "Failed" ? found : undefined;
    },
    { timeoutMs: 30_000, what: "the Deployment's entry to be Failed" },
  );
  const entry = entries(group).find((e) => e["name"] === "web") as JsonObject;
  assert.equal(entry["reconcile"], "Failed");
  assert.equal(entry["actuation"], "Succeeded");
  const stalled = ((entry["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Stalled");
  assert.equal(stalled?.["status"], "True");
  assert.equal(stalled?.["reason"], "ProgressDeadlineExceeded");
  assert.match(String(stalled?.["message"]), /has timed out progressing/);
  // The group's own Stalled condition names it, in Config Sync's words.
  const groupStalled = (((group["status"] as JsonObject)["conditions"] ?? []) as JsonObject[]).find(
    (c) => c["type"] === "Stalled",
  );
  assert.equal(groupStalled?.["message"], `The following components failed:apps/Deployment/${namespace}/web`);
});

test("a dependent of a Deployment that turns Failed is skipped at once, not after reconcileTimeout", async (t) => {
  const id = suffix();
  const name = `kstd-${id}`;
  const namespace = `kstd-${id}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/ns.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  );
  await repo.write("config/web.yaml", JSON.stringify(deployment(namespace)));
  await repo.write(
    "config/after-web.yaml",
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "after-web",
        namespace,
        annotations: { "config.kubernetes.io/depends-on": `apps/namespaces/${namespace}/Deployment/web` },
      },
    }),
  );
  const commit = await repo.commit("a config map depending on a deployment that misses its progress deadline");
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  // Ten minutes: a wait that ran to the timeout would outlast this test's own deadline.
  await createRootSync(name, repo, { spec: { override: { reconcileTimeout: "10m" } } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  const errors = await eventually(
    async () => {
      const sync = (await rootSyncStatus(name))["sync"] as JsonObject | undefined;
      const found = (sync?.["errors"] ?? []) as JsonObject[];
      return sync?.["commit"] === commit && found.length > 0 ? found : undefined;
    },
    { timeoutMs: 120_000, what: "the dependent to be reported skipped" },
  );
  assert.deepEqual(
    errors.map((e) => e["errorMessage"]),
    [
      `KNV2009: skipped apply of ConfigMap, ${namespace}/after-web: dependency apply reconcile failed: ${namespace}_web_apps_Deployment\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`,
    ],
  );
  const exists = await coreApi()
    .readNamespacedConfigMap({ namespace, name: "after-web" })
    .then(() => true)
    .catch(() => false);
  assert.equal(exists, false, "the dependent was applied");
});

function deployment(namespace: string): unknown {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace },
    spec: {
      replicas: 1,
      progressDeadlineSeconds: 2,
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } },
    },
  };
}

async function resourceGroup(name: string): Promise<JsonObject> {
  return (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
}

function entries(group: JsonObject): JsonObject[] {
  return ((group["status"] as JsonObject | undefined)?.["resourceStatuses"] ?? []) as JsonObject[];
}
