/**
 * deployment mode's render container (hydration-controller) follows what the source needs, as in Config
 * Sync: the reconciler records `configsync.gke.io/requires-rendering` on its sync, the manager adds or
 * removes the container. No kubelet runs the pod, so the reconciler runs here in the test's process, as
 * a pod without the render container would (its render socket's folder absent), beside the real manager.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject } from "@driftless/kube";
import { eventually, startReconciler, TestRepo, removeAfter } from "../../support/index.ts";
import {
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  repoSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();
const annotation = "configsync.gke.io/requires-rendering";

interface PodSpec {
  containers: { name: string; volumeMounts?: { name: string; mountPath: string }[] }[];
  volumes: { name: string }[];
}
function podSpec(deployment: KubeObject | undefined): PodSpec {
  return ((deployment?.["spec"] as Record<string, unknown>)["template"] as { spec: PodSpec }).spec;
}
// No Deployment (not yet, or between a delete and a re-create) has no containers: waits go on.
const containerNames = (deployment: KubeObject | undefined): string[] =>
  deployment === undefined ? [] : podSpec(deployment).containers.map((c) => c.name);

test("a RepoSync's Deployment has the hydration-controller container only while its source holds a kustomization", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const namespace = await createNamespace(t, "render");
  const deploymentName = `ns-reconciler-${namespace}`;
  const deployment = (): Promise<KubeObject | undefined> =>
    getObject(Mapping.Deployment, systemNamespace, deploymentName);
  const repo = await TestRepo.create(t);
  await repo.write("config/plain.yaml", configMap("plain", namespace, { a: "1" }));
  const wet = await repo.commit("wet");
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch, dir: "config" }),
  );

  // A source that needs no rendering: one container, no socket folder, no render /tmp.
  const first = await eventually(deployment, { what: `Deployment ${deploymentName}` });
  assert.deepEqual(containerNames(first), ["reconciler"]);
  assert.deepEqual(
    podSpec(first)
      .volumes.map((v) => v.name)
      .filter((n) => n.startsWith("render")),
    [],
  );

  const absent = await mkdtemp(join(tmpdir(), "driftless-no-render-"));
  removeAfter(t, absent);
  await startReconciler(
    t,
    { kind: "RepoSync", namespace, name: "repo-sync" },
    { renderToolsDir, renderSocket: join(absent, "render", "render.sock") },
  );
  await synced("RepoSync", namespace, "repo-sync", wet);
  await eventually(async () => containerNames(await deployment()).join() === "reconciler", {
    what: "the Deployment, still with the reconciler container only",
  });

  // A kustomization: the reconciler says so on the RepoSync, the manager adds the container.
  await repo.write(
    "config/kustomization.yaml",
    JSON.stringify({ namespace, configMapGenerator: [{ name: "generated", literals: ["b=2"] }] }),
  );
  await repo.commit("needs rendering");
  await eventually(
    async () => (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations?.[annotation] === "true",
    {
      what: `${annotation}: "true" on the RepoSync`,
    },
  );
  const withRender = await eventually(
    async () => {
      const d = await deployment();
      return containerNames(d).includes("hydration-controller") ? d : undefined;
    },
    { what: "the hydration-controller container added" },
  );
  const pod = podSpec(withRender);
  assert.deepEqual(containerNames(withRender), ["reconciler", "hydration-controller"]);
  assert.ok(pod.volumes.some((v) => v.name === "render"));
  const tokenMounts = pod.containers.filter((c) =>
    (c.volumeMounts ?? []).some((m) => m.mountPath.startsWith("/var/run/secrets")),
  );
  assert.deepEqual(
    tokenMounts.map((c) => c.name),
    ["reconciler"],
  );

  // Gone from the source: "false", and the container goes.
  await repo.remove("config/kustomization.yaml");
  const wetAgain = await repo.commit("wet again");
  await synced("RepoSync", namespace, "repo-sync", wetAgain);
  assert.equal((await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations?.[annotation], "false");
  const withoutRender = await eventually(
    async () => {
      const d = await deployment();
      return containerNames(d).join() === "reconciler" ? d : undefined;
    },
    { what: "the hydration-controller container removed" },
  );
  assert.deepEqual(
    podSpec(withoutRender)
      .volumes.map((v) => v.name)
      .filter((n) => n.startsWith("render")),
    [],
  );
});
