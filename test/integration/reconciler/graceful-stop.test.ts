/**
 * SIGTERM to a reconciler process in the middle of a commit's apply: its job ends with it (not abandoned
 * at the queue's close deadline, past the manager's 10 s grace), the ResourceGroup holds everything on the
 * cluster, and the next start finishes the sync, pruning what left Git while it was down.
 */
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { reconcilerEnvironment, reconcilerNodeFlags } from "@driftless/controller";
import { findRepoRoot } from "@driftless/local-cluster";
import { closeRedisConnection, createRedisConnection, syncQueueName } from "@driftless/queue";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  suffix,
  testEnv,
  TestRepo,
  type JsonObject,
  removeAfter,
} from "../../support/index.ts";

const yaml = (obj: unknown): string => JSON.stringify(obj);

const configMap = (namespace: string, name: string, extra: JsonObject = {}): unknown => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace, ...extra },
  data: { name },
});

// No kubelet here: a Deployment with replicas never becomes Current, one scaled to 0 does.
const deployment = (namespace: string, replicas: number): unknown => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } },
  },
});

interface ReconcilerProcess {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly output: () => string;
  kill(signal: NodeJS.Signals): void;
}

/** The reconciler program (apps/reconciler) as the manager runs it, for the RootSync `name`. */
async function spawnReconciler(t: TestContext, name: string, queuePrefix: string): Promise<ReconcilerProcess> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-sigterm-"));
  removeAfter(t, dir);
  const child = spawn(
    process.execPath,
    [
      ...reconcilerNodeFlags(),
      join(findRepoRoot(), "apps", "reconciler", "src", "main.ts"),
      "--sync-kind=RootSync",
      `--sync-name=${name}`,
      `--sync-namespace=${rootSyncNamespace}`,
      `--kubeconfig=${testEnv().kubeconfig}`,
      `--queue-prefix=${queuePrefix}`,
      `--cache-dir=${join(dir, "cache")}`,
      "--allow-file-repos",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...reconcilerEnvironment, REDIS_URL: testEnv().redisUrl },
    },
  );
  const chunks: string[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { exited, output: () => chunks.join(""), kill: (signal) => child.kill(signal) };
}

async function configMapNames(namespace: string): Promise<string[]> {
  const { items } = await coreApi().listNamespacedConfigMap({ namespace });
  return items
    .map((cm) => cm.metadata?.name ?? "")
    .filter((n) => n !== "kube-root-ca.crt")
    .sort();
}

async function inventoryNames(name: string): Promise<string[]> {
  const group = (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
  const resources = ((group["spec"] as JsonObject | undefined)?.["resources"] ?? []) as JsonObject[];
  return resources.map((r) => `${String(r["kind"])}/${String(r["name"])}`).sort();
}

test("SIGTERM while a dependent waits for its dependency: the reconciler ends its job and exits, and the next start prunes what left Git meanwhile and finishes", async (t) => {
  const id = suffix();
  const name = `sigterm-${id}`;
  const namespace = `sigterm-${id}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .then(
        () => undefined,
        () => undefined,
      ),
  );
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  for (let i = 0; i < 10; i++) await repo.write(`config/old-${i}.yaml`, yaml(configMap(namespace, `old-${i}`)));
  const first = await repo.commit("ten config maps");
  await createRootSync(name, repo);
  const queuePrefix = `t${suffix()}`;
  const one = await spawnReconciler(t, name, queuePrefix);
  await rootSynced(name, first);

  // A large commit whose last wave waits (reconcileTimeout, 5 min by default) for a Deployment that
  // cannot become Current here.
  for (let i = 0; i < 5; i++) await repo.remove(`config/old-${i}.yaml`);
  for (let i = 0; i < 100; i++) await repo.write(`config/new-${i}.yaml`, yaml(configMap(namespace, `new-${i}`)));
  await repo.write("config/web.yaml", yaml(deployment(namespace, 1)));
  await repo.write(
    "config/after-web.yaml",
    yaml(
      configMap(namespace, "after-web", {
        annotations: { "config.kubernetes.io/depends-on": `apps/namespaces/${namespace}/Deployment/web` },
      }),
    ),
  );
  const second = await repo.commit("a hundred more, and one that waits for a deployment");
  // Mid-apply: the Deployment is written and the pass, still syncing the commit, waits on it.
  await eventually(
    async () => {
      const conditions = ((await rootSyncStatus(name))["conditions"] ?? []) as JsonObject[];
      const syncing = conditions.find((c) => c["type"] === "Syncing");
      if (syncing?.["status"] !== "True" || syncing["commit"] !== second) return false;
      await customApi().getNamespacedCustomObject({
        group: "apps",
        version: "v1",
        namespace,
        plural: "deployments",
        name: "web",
      });
      return true;
    },
    { timeoutMs: 60_000, what: "the pass waiting on the Deployment" },
  );
  // Nothing has written the dependent: the wait is what the pass is doing.
  assert.equal((await configMapNames(namespace)).includes("after-web"), false);

  one.kill("SIGTERM");
  // No clock here: a wait the stop does not end holds the job past the queue's close deadline, which then
  // abandons it, still active and locked, as the checks below see (the manager would SIGKILL it at 10 s).
  const outcome = await one.exited;
  assert.deepEqual(outcome, { code: 0, signal: null }, one.output().slice(-3000));

  // Its job ended with it: no lock left for BullMQ to wait out before the next start's pass may run.
  const redis = createRedisConnection(testEnv().redisUrl, { log: () => undefined });
  try {
    await eventually(async () => (await redis.ping()) === "PONG", { what: "the test's Redis connection" });
    const queue = `${queuePrefix}:${syncQueueName({ kind: "RootSync", namespace: rootSyncNamespace, name })}`;
    assert.deepEqual(await redis.keys(`${queue}:*:lock`), [], "a job lock outlived the reconciler");
    assert.equal(await redis.llen(`${queue}:active`), 0, "a job is still active");
  } finally {
    await closeRedisConnection(redis);
  }

  // What the cluster holds is in the inventory: nothing written is unrecorded.
  const live = await configMapNames(namespace);
  const recorded = new Set(await inventoryNames(name));
  for (const cm of live)
    assert.ok(recorded.has(`ConfigMap/${cm}`), `ConfigMap/${cm} on the cluster, not in the inventory`);

  // While it is down: the Deployment scales to 0 (Current), and old-5 leaves Git.
  await repo.remove("config/old-5.yaml");
  await repo.write("config/web.yaml", yaml(deployment(namespace, 0)));
  const third = await repo.commit("scale to zero; drop old-5");
  const two = await spawnReconciler(t, name, queuePrefix);
  const status = await rootSynced(name, third).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${two.output().slice(-3000)}`);
  });
  assert.deepEqual((status["sync"] as JsonObject)["errors"] ?? [], []);
  const expected = [
    "after-web",
    ...Array.from({ length: 100 }, (_, i) => `new-${i}`),
    ...Array.from({ length: 4 }, (_, i) => `old-${i + 6}`),
  ].sort();
  assert.deepEqual(await configMapNames(namespace), expected);
  assert.deepEqual(
    (await inventoryNames(name)).filter((n) => n.startsWith("ConfigMap/")),
    expected.map((n) => `ConfigMap/${n}`).sort(),
  );
});
