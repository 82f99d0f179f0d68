/**
 * `npm run bench stress`: the shapes of Config Sync's own stress tests (e2e/testcases/stress_test.go)
 * on the local control plane, each synced by a fresh reconciler process of a RootSync of its own
 * (see docs/benchmarks.md). Per scenario: time from the push to Synced, the reconciler's CPU, its peak
 * RSS (VmHWM), its API requests by verb, and the writes of an idle resync (two full passes after); where the
 * time to Synced is not the sync's work, also how long the pushes took, or when all objects were written.
 *
 * Sizes (defaults are the issue's): STRESS_NAMESPACES=1000, STRESS_CONFIGMAPS=5000, STRESS_CRDS=100,
 * STRESS_CRS_PER_CRD=50, STRESS_COMMITS=100, STRESS_DEPLOYMENTS=1000, STRESS_RECONCILE_TIMEOUT=30s;
 * STRESS_ONLY=configmaps,crds picks scenarios; STRESS_LOG_DIR=dir keeps each reconciler's log there. RECONCILER_ENTRY=src runs the TypeScript sources.
 */
import type { ChildProcess } from "node:child_process";
import { appendFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freeLoopbackPort } from "@driftless/local-cluster";
import {
  BenchRepo,
  cpuSeconds,
  difference,
  loadAverage,
  requestsByVerb,
  statusMiB,
  sumOf,
  verbCell,
  waitFor,
  writeVerbs,
} from "./bench-process.ts";
import { namespaceMapping, type ResourceMapping } from "@driftless/kube";
import { widgetCrd } from "../support/crds.ts";
import { reconcilerEntry, rootSyncMapping, spawnBenchReconciler, startBenchCluster } from "./bench-cluster.ts";

const size = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const sizes = {
  namespaces: size("STRESS_NAMESPACES", 1000),
  configMaps: size("STRESS_CONFIGMAPS", 5000),
  crds: size("STRESS_CRDS", 100),
  crsPerCrd: size("STRESS_CRS_PER_CRD", 50),
  commits: size("STRESS_COMMITS", 100),
  deployments: size("STRESS_DEPLOYMENTS", 1000),
};
const reconcileTimeout = process.env["STRESS_RECONCILE_TIMEOUT"] ?? "30s";
const only = process.env["STRESS_ONLY"]?.split(",");
const rootNamespace = "config-management-system";
/**
 * When the commits scenario pushed its first and last commits: its time runs from the first push, and
 * the time from the last push to Synced is noted too.
 */
let firstPush: number | undefined;
let lastPush: number | undefined;

const bench = await startBenchCluster("stress");
const { root, client, close } = bench;
await client.create(namespaceMapping, { apiVersion: "v1", kind: "Namespace", metadata: { name: rootNamespace } });
const reconcilerMain = reconcilerEntry();

const yaml = (...objects: object[]): string => objects.map((o) => JSON.stringify(o)).join("\n---\n") + "\n";
const configMap = (namespace: string, name: string): object => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data: { value: name, owner: "stress" },
});
const customResource = (group: string, kind: string, namespace: string, name: string): object => ({
  apiVersion: `${group}/v1`,
  kind,
  metadata: { name, namespace },
  spec: { size: 1 },
});
const deployment = (namespace: string, name: string): object => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "app", image: "registry.invalid/app:1" }] },
    },
  },
});

interface Running {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly metricsPort: number;
  readonly passes: () => number;
}

/** A RootSync of `repo` and its reconciler, idle after its first (empty) pass. */
async function startSync(name: string, repo: BenchRepo, override: object = {}): Promise<Running> {
  await client.create(rootSyncMapping, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name, namespace: rootNamespace, annotations: { "configsync.gke.io/allow-empty-source": "true" } },
    spec: {
      sourceFormat: "unstructured",
      git: { repo: repo.url, branch: "main", dir: "config", auth: "none", period: "1s" },
      override,
    },
  });
  const metricsPort = await freeLoopbackPort();
  let log = "";
  // Every poll a full pass: the idle resync is measured, not skipped.
  const child = spawnBenchReconciler(bench, {
    entry: reconcilerMain,
    sync: { kind: "RootSync", namespace: rootNamespace, name },
    metricsPort,
    key: name,
    everyPollFullPass: true,
  });
  // Counted as they come: the log of a big sync is not kept.
  let passes = 0;
  const logDir = process.env["STRESS_LOG_DIR"];
  if (logDir !== undefined) await mkdir(logDir, { recursive: true });
  const keptLog = logDir === undefined ? undefined : join(logDir, `${name}.log`);
  child.stdout?.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-200);
    if (keptLog !== undefined) appendFileSync(keptLog, chunk);
    passes += chunk.toString().split('"pass finished"').length - 1;
  });
  const running = { child, pid: child.pid ?? 0, metricsPort, passes: () => passes };
  await waitFor(`${name}: first pass`, () => Promise.resolve(passes > 0), 120_000);
  return running;
}

async function stop(running: Running): Promise<void> {
  running.child.kill("SIGTERM");
  await new Promise((resolve) => running.child.once("exit", resolve));
}

interface SyncStatus {
  lastSyncedCommit?: string;
  conditions?: { type: string; status: string }[];
  sync?: { errors?: { code?: string }[] };
}

async function syncedAt(name: string, commit: string, timeoutMs = 1_800_000): Promise<SyncStatus> {
  return waitFor(
    `${name} synced to ${commit.slice(0, 7)}`,
    async () => {
      const status = ((await client.get(rootSyncMapping, rootNamespace, name))?.["status"] ?? {}) as SyncStatus;
      const syncing = status.conditions?.find((c) => c.type === "Syncing");
      return status.lastSyncedCommit === commit && syncing?.status === "False" ? status : undefined;
    },
    timeoutMs,
    200,
  );
}

interface Row {
  readonly scenario: string;
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly peakRssMiB: number;
  readonly requests: string;
  readonly idleResyncWrites: number;
  readonly note: string;
  readonly load: string;
}

const deploymentMapping: ResourceMapping = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  resource: "deployments",
  namespaced: true,
  verbs: ["list"],
};

/** Objects of a type in a namespace the bench counts until all `count` exist: where a sync's time is not its work. */
interface Written {
  readonly mapping: ResourceMapping;
  readonly namespace: string;
  readonly count: number;
}

/**
 * When all of `written` first existed: a metadata-only list every 250 ms (the same for any tool, so a
 * side-by-side can use it), until they do or `stop` is called. Time on performance.now()'s clock.
 */
function whenWritten(written: Written): { stop: () => Promise<number | undefined> } {
  let stopped = false;
  const polling = (async (): Promise<number | undefined> => {
    while (!stopped) {
      const { items } = await client.list(written.mapping, { namespace: written.namespace, metadataOnly: true });
      if (items.length >= written.count) return performance.now();
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return undefined;
  })();
  return {
    stop: () => {
      stopped = true;
      return polling;
    },
  };
}

/**
 * One scenario: `change` writes the repository and pushes (returning the commit to wait for);
 * `after` may push a second change (the removal) and returns a note; `written` is also timed.
 */
async function scenario(
  name: string,
  change: (repo: BenchRepo) => Promise<string>,
  options: {
    override?: object;
    after?: (repo: BenchRepo, running: Running) => Promise<string>;
    written?: Written;
  } = {},
): Promise<Row> {
  const repo = new BenchRepo(root, name);
  await writeFile(join(repo.work, "README.md"), "stress\n");
  repo.commitAndPush("empty");
  const running = await startSync(name, repo, options.override ?? {});
  const load = await loadAverage();
  const [cpu0, requests0] = [await cpuSeconds(running.pid), await requestsByVerb(running.metricsPort)];
  const writing = options.written === undefined ? undefined : whenWritten(options.written);
  const commit = await change(repo);
  // From the push: writing and committing thousands of files is the bench's work, not the sync's.
  const t0 = firstPush ?? performance.now();
  firstPush = undefined;
  const status = await syncedAt(name, commit);
  const seconds = (performance.now() - t0) / 1000;
  const fromLastPush = lastPush === undefined ? undefined : (performance.now() - lastPush) / 1000;
  lastPush = undefined;
  const codes = [...new Set((status.sync?.errors ?? []).map((e) => e.code ?? "?"))].join(", ");
  let note = `${status.sync?.errors?.length ?? 0} sync errors${codes === "" ? "" : ` (${codes})`}`;
  if (fromLastPush !== undefined)
    note += `; last push → Synced ${fromLastPush.toFixed(1)} s (the pushes took ${(seconds - fromLastPush).toFixed(1)} s)`;
  const writtenAt = await writing?.stop();
  if (writtenAt !== undefined)
    note += `; all ${options.written?.count} ${options.written?.mapping.resource} written ${((writtenAt - t0) / 1000).toFixed(1)} s after the push`;
  if (options.after !== undefined) note += `; ${await options.after(repo, running)}`;
  const cpu = (await cpuSeconds(running.pid)) - cpu0;
  const peakRssMiB = await statusMiB(running.pid, "VmHWM");
  const requests = difference(await requestsByVerb(running.metricsPort), requests0);
  // An idle resync: two full passes over the unchanged commit and cluster.
  const passes = running.passes();
  const before = await requestsByVerb(running.metricsPort);
  await waitFor(`${name}: two idle passes`, () => Promise.resolve(running.passes() >= passes + 2), 600_000);
  const idleResyncWrites = sumOf(difference(await requestsByVerb(running.metricsPort), before), writeVerbs);
  await stop(running);
  const row = {
    scenario: name,
    seconds,
    cpuSeconds: cpu,
    peakRssMiB,
    requests: verbCell(requests),
    idleResyncWrites,
    note,
    load,
  };
  process.stderr.write(`${JSON.stringify(row)}\n`);
  return row;
}

async function writeConfig(repo: BenchRepo, file: string, text: string): Promise<void> {
  await mkdir(join(repo.work, "config", file.split("/").slice(0, -1).join("/")), { recursive: true });
  await writeFile(join(repo.work, "config", file), text);
}

const scenarios: Record<string, () => Promise<Row>> = {
  configmaps: () =>
    scenario(`configmaps-${sizes.configMaps}`, async (repo) => {
      await writeConfig(
        repo,
        "ns.yaml",
        yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: "stress-cm" } }),
      );
      for (let i = 0; i < sizes.configMaps; i++)
        await writeConfig(repo, `cm-${i}.yaml`, yaml(configMap("stress-cm", `cm-${i}`)));
      return repo.commitAndPush("config maps");
    }),
  commits: () =>
    scenario(`commits-${sizes.commits}`, async (repo) => {
      await writeConfig(
        repo,
        "ns.yaml",
        yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: "stress-commits" } }),
      );
      let commit = "";
      // Back to back: each commit adds one ConfigMap and is pushed on its own.
      for (let i = 0; i < sizes.commits; i++) {
        await writeConfig(repo, `cm-${i}.yaml`, yaml(configMap("stress-commits", `cm-${i}`)));
        commit = repo.commitAndPush(`commit ${i}`);
        firstPush ??= performance.now();
      }
      lastPush = performance.now();
      return commit;
    }),
  deployments: () =>
    scenario(
      `deployments-${sizes.deployments}`,
      async (repo) => {
        await writeConfig(
          repo,
          "ns.yaml",
          yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: "stress-deploy" } }),
        );
        for (let i = 0; i < sizes.deployments; i++)
          await writeConfig(repo, `deploy-${i}.yaml`, yaml(deployment("stress-deploy", `app-${i}`)));
        return repo.commitAndPush("deployments");
      },
      // No kubelet: the Deployments never become available; the wait ends at reconcileTimeout, reported.
      // The timeout is then the time to Synced, so when all were written is timed too.
      {
        override: { reconcileTimeout },
        written: { mapping: deploymentMapping, namespace: "stress-deploy", count: sizes.deployments },
      },
    ),
  crds: () => {
    const groups = Array.from({ length: sizes.crds }, (_, i) => ({
      group: `g${i}.stress.driftless.dev`,
      kind: `Widget${i}`,
    }));
    return scenario(
      `crds-${sizes.crds}x${sizes.crsPerCrd}`,
      async (repo) => {
        await writeConfig(
          repo,
          "ns.yaml",
          yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: "stress-crds" } }),
        );
        for (const { group, kind } of groups) {
          const crs = Array.from({ length: sizes.crsPerCrd }, (_, j) =>
            customResource(group, kind, "stress-crds", `cr-${j}`),
          );
          await writeConfig(repo, `${kind}.yaml`, yaml(widgetCrd(group, kind), ...crs));
        }
        return repo.commitAndPush("crds and custom resources");
      },
      {
        after: async (repo) => {
          // The directory stays (a missing spec.git.dir is an error, KNV2004); its objects go.
          await rm(join(repo.work, "config"), { recursive: true, force: true });
          await writeConfig(repo, "README.md", "all removed\n");
          const removal = repo.commitAndPush("all removed");
          const t1 = performance.now();
          await syncedAt(`crds-${sizes.crds}x${sizes.crsPerCrd}`, removal);
          return `all removed from Git → Synced in ${((performance.now() - t1) / 1000).toFixed(1)} s`;
        },
      },
    );
  },
  namespaces: () =>
    scenario(`namespaces-${sizes.namespaces}`, async (repo) => {
      await writeConfig(repo, "crd.yaml", yaml(widgetCrd("ns.stress.driftless.dev", "Gadget")));
      for (let i = 0; i < sizes.namespaces; i++) {
        const ns = `stress-ns-${i}`;
        await writeConfig(
          repo,
          `ns-${i}.yaml`,
          yaml(
            { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
            configMap(ns, "cm"),
            customResource("ns.stress.driftless.dev", "Gadget", ns, "gadget"),
          ),
        );
      }
      return repo.commitAndPush("namespaces");
    }),
};

const rows: Row[] = [];
try {
  for (const [name, run] of Object.entries(scenarios))
    if (only === undefined || only.includes(name)) rows.push(await run());
} finally {
  await close();
}

console.log(
  "| scenario | push → Synced | reconciler CPU | peak RSS | API requests by verb | writes of an idle resync | notes | load (1 min) |",
);
console.log("| --- | ---: | ---: | ---: | --- | ---: | --- | ---: |");
for (const r of rows)
  console.log(
    `| ${r.scenario} | ${r.seconds.toFixed(1)} s | ${r.cpuSeconds.toFixed(1)} s | ${Math.round(r.peakRssMiB)} MiB | ${r.requests} | ${r.idleResyncWrites} | ${r.note} | ${r.load} |`,
  );
const out = process.env["BENCH_OUT"];
if (out !== undefined)
  await writeFile(out, JSON.stringify({ benchmark: "stress", sizes, reconcileTimeout, rows }, null, 2));
