/**
 * A watch refused after the pass that started it has ended: the API server's answer to a new type's watch
 * comes once the pass has reported the commit synced (held here by a proxy; on a loaded server, slow). The
 * refusal must still reach the sync's status, not wait for the next full pass.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  createRootSync,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  syncErrorsAt,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";
import { limitedKubeconfig } from "../../support/limited-identity.ts";
import { adminClient } from "../kube/support.ts";
import { startApiProxy } from "./api-proxy.ts";

test("a type's watch refused after its pass ended is reported by a pass at once (KNV2009), not at the next resync", async (t) => {
  const name = `late-refusal-${suffix()}`;
  const namespace = await testNamespace(t, "late-refusal");
  const client = await adminClient(t);
  const proxy = await startApiProxy(t);
  const kubeconfig = await limitedKubeconfig(
    t,
    client,
    [
      {
        apiGroups: ["configsync.gke.io"],
        resources: ["rootsyncs", "rootsyncs/status"],
        verbs: ["get", "list", "watch", "update", "patch"],
      },
      { apiGroups: ["kpt.dev"], resources: ["resourcegroups", "resourcegroups/status"], verbs: ["*"] },
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
      { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch", "create", "update", "patch"] },
      // ConfigMaps may be read and written, not watched.
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "create", "update", "patch", "delete"] },
    ],
    { server: proxy.url },
  );
  // The ConfigMaps' watch waits at the proxy until the pass has reported its commit.
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  t.after(() => release());
  const configMapWatch = (r: { method: string; path: string; query: string }): boolean =>
    r.method === "GET" && r.path.endsWith("/configmaps") && /(^|&)watch=(1|true)(&|$)/.test(r.query);
  proxy.hold = (r) => (configMapWatch(r) ? released : undefined);

  const repo = await TestRepo.create(t);
  await repo.write(
    "config/a.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace }, data: { k: "a" } }),
  );
  const commit = await repo.commit("a config map");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { kubeconfig });
  const synced = await rootSynced(name, commit);
  assert.ok(
    proxy.requests.some((r) => configMapWatch(r) && r.status === undefined),
    "the ConfigMaps' watch was answered before the pass ended: the test shows nothing",
  );
  assert.deepEqual((synced["sync"] as { errors?: unknown[] } | undefined)?.errors ?? [], []);

  release();
  const errors = await syncErrorsAt(name, commit);
  assert.ok(
    errors.some(
      (e) =>
        e["code"] === "2009" &&
        /polling for status failed: configmaps is forbidden: .* cannot watch resource "configmaps"/.test(
          String(e["errorMessage"]),
        ),
    ),
    `the refused watch is not on the status: ${JSON.stringify(errors)}`,
  );
});
