/**
 * Deployment mode's render container, from the reconciler's side: a reconciler given a render socket
 * records on its RootSync whether the source needs rendering (configsync.gke.io/requires-rendering),
 * and while it does and the pod has no render container (the socket's folder is absent), reports the
 * wait on status and applies and deletes nothing. A "pod restart" with the render container renders.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncs,
  rootSyncNamespace,
  startReconciler,
  suffix,
  TestRepo,
  type JsonObject,
  removeAfter,
} from "../../support/index.ts";
import { startRenderServer } from "../../support/render-server.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();
const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);
const annotation = "configsync.gke.io/requires-rendering";

async function rootSync(name: string): Promise<JsonObject & { metadata: { annotations?: Record<string, string> } }> {
  return (await customApi().getNamespacedCustomObject({ ...rootSyncs, name })) as never;
}

async function configMapNames(namespace: string): Promise<string[]> {
  const list = await coreApi().listNamespacedConfigMap({ namespace });
  return list.items.map((cm) => cm.metadata?.name ?? "").filter((n) => n !== "kube-root-ca.crt");
}

test("a reconciler without its render container records requires-rendering, reports the wait and applies nothing; restarted with the container it renders, and a wet source again sets it false", async (t) => {
  const name = `render-gate-${suffix()}`;
  const ns = `rg-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }));
  await repo.write(
    "config/plain.yaml",
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "plain", namespace: ns }, data: { a: "1" } }),
  );
  const wet = await repo.commit("wet");
  await createRootSync(name, repo);
  // A pod without the render container: no socket folder. kustomize is at hand, so a reconciler that
  // rendered in its own container (beside its token) would sync the kustomization below.
  const absent = await mkdtemp(join(tmpdir(), "driftless-no-render-"));
  removeAfter(t, absent);
  const withoutContainer = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { renderToolsDir, renderSocket: join(absent, "render", "render.sock") },
  );
  await rootSynced(name, wet);
  assert.equal(
    (await rootSync(name)).metadata.annotations?.[annotation],
    undefined,
    "a wet source wrote the annotation",
  );

  await repo.write(
    "config/kustomization.yaml",
    yaml({ resources: ["ns.yaml"], configMapGenerator: [{ name: "generated", namespace: ns, literals: ["b=2"] }] }),
  );
  const dry = await repo.commit("needs rendering");
  const waiting = await eventually(
    async () => {
      const sync = await rootSync(name);
      const rendering = (sync["status"] as JsonObject)["rendering"] as JsonObject | undefined;
      return sync.metadata.annotations?.[annotation] === "true" && rendering?.["commit"] === dry ? sync : undefined;
    },
    { timeoutMs: 60_000, what: "requires-rendering true and the rendering status of the dry commit" },
  );
  const status = waiting["status"] as JsonObject & { conditions: JsonObject[] };
  const rendering = status["rendering"] as JsonObject & { errors: JsonObject[] };
  assert.equal(rendering["message"], "Rendering required but is currently disabled");
  assert.equal(rendering.errors[0]?.["code"], "2016");
  assert.match(String(rendering.errors[0]?.["errorMessage"]), /config\/kustomization\.yaml.*hydration-controller/);
  const syncing = status.conditions.find((c) => c["type"] === "Syncing");
  assert.equal(syncing?.["reason"], "Rendering");
  assert.equal(syncing?.["status"], "False");
  assert.equal(status["lastSyncedCommit"], wet);
  // Retried (transient), and still nothing applied or pruned.
  const passes = withoutContainer.passCount;
  await eventually(() => withoutContainer.passCount >= passes + 2, { what: "the wait retried" });
  assert.deepEqual((await configMapNames(ns)).sort(), ["plain"]);

  // The manager replaced the pod: one with the render container, which renders the commit.
  await withoutContainer.stop(5_000);
  const server = await startRenderServer(t, renderToolsDir);
  await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { renderToolsDir: server.noToolsDir, cacheDir: server.cacheDir, renderSocket: server.socket },
  );
  const rendered = await rootSynced(name, dry);
  assert.equal((rendered["rendering"] as JsonObject)["message"], "Rendering succeeded");
  const names = await configMapNames(ns);
  assert.equal(names.length, 1, names.join(", "));
  assert.match(names[0] ?? "", /^generated-/);

  // Wet again: "false" (the manager then drops the container), and the source is read as it is meanwhile.
  await repo.remove("config/kustomization.yaml");
  const wetAgain = await repo.commit("wet again");
  const synced = await rootSynced(name, wetAgain);
  assert.equal((synced["rendering"] as JsonObject)["message"], "Rendering skipped");
  assert.equal((await rootSync(name)).metadata.annotations?.[annotation], "false");
  assert.deepEqual(await configMapNames(ns), ["plain"]);
});
