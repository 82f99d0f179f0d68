/**
 * A container port declared without `protocol`, part of the ports' merge key the API server fills with TCP
 * (Config Sync's e2e TestDeclaredFieldsPod). Config Sync's server-side apply syncs it; driftless must match
 * the defaulted live item to the declared one, or every pass would write the object again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WriteVerbs } from "@driftless/kube";
import {
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

test("a container port declared without protocol is created once, no later pass writes it, and the sync reports no error", async (t) => {
  const namespace = await testNamespace(t, "port-protocol");
  const name = `port-protocol-${suffix()}`;
  const repo = await TestRepo.create(t);
  // A Deployment of no replicas stands in for Config Sync's Pod: the control plane runs no kubelet.
  await repo.write(
    "config/web.yaml",
    [
      "apiVersion: apps/v1",
      "kind: Deployment",
      "metadata:",
      "  name: web",
      `  namespace: ${namespace}`,
      "spec:",
      "  replicas: 0",
      "  selector: {matchLabels: {app: web}}",
      "  template:",
      "    metadata: {labels: {app: web}}",
      "    spec:",
      "      containers:",
      "      - name: nginx",
      "        image: nginx",
      "        ports:",
      "        - containerPort: 80",
      "",
    ].join("\n"),
  );
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );
  let writes = 0;
  const unsubscribe = reconciler.client.requests.onRequest((verb, status, _ms, path) => {
    if (WriteVerbs.has(verb) && status > 0 && status < 400 && path.includes(`/namespaces/${namespace}/deployments`))
      writes++;
  });
  t.after(unsubscribe);
  await rootSynced(name, await repo.commit("a container port without protocol"));

  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 4, { timeoutMs: 60_000, what: "4 more passes" });
  assert.equal(writes, 1, "the Deployment was written again after its creation");
  const sync = (await rootSyncStatus(name))["sync"] as JsonObject;
  assert.deepEqual(sync["errors"] ?? [], []);
});
