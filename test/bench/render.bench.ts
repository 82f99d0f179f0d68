/**
 * Rendering cost on a real local control plane, Redis and git (see docs/benchmarks.md, "Rendering"):
 * a sync directory holding a kustomization that produces 1,000 objects (an overlay with namePrefix,
 * commonLabels, namespace and a configMapGenerator over a base listing 999 ConfigMap files), against
 * the same 1,000 objects as plain files (kustomize's output split one object per file, unstructured).
 * - the render step alone: wall time and peak RSS of `kustomize build` with the reconciler's arguments
 * - the reconciler's first pass over the commit: its phases from the pass log (fetch, render, read, …)
 * - the reconciler's peak RSS (VmHWM) when the commit is synced, rendered and plain, in the same run
 *
 * BENCH_ROUNDS (default 2) reconcilers per form, alternating plain and rendered; BENCH_RENDER_ROUNDS
 * (default 5) timed kustomize builds. RECONCILER_ENTRY=src runs the TypeScript sources, not the bundle.
 */
import { execFile, execFileSync, type ChildProcess } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { findRepoRoot, freeLoopbackPort } from "@driftless/local-cluster";
import { configMapMapping, namespaceMapping } from "@driftless/kube";
import { benchConfigMap } from "./config-map.ts";
import { reconcilerEntry, repoSyncMapping, spawnBenchReconciler, startBenchCluster } from "./bench-cluster.ts";

const objects = 1000;
const rounds = Number(process.env["BENCH_ROUNDS"] ?? "2");
const renderRounds = Number(process.env["BENCH_RENDER_ROUNDS"] ?? "5");
const repoRoot = findRepoRoot();

/** The newest kustomize/helm build packages/sync/scripts/build-render-tools.sh left in .local/bin. */
function renderToolsDir(): string {
  const bin = join(repoRoot, ".local", "bin");
  const dirs = readdirSync(bin)
    .filter((d) => d.startsWith("render-"))
    .map((d) => join(bin, d))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const dir = dirs[0];
  if (dir === undefined)
    throw new Error("bench: no render tools in .local/bin (packages/sync/scripts/build-render-tools.sh)");
  return dir;
}
const toolsDir = renderToolsDir();

const { root, cluster, redis, client, close } = await startBenchCluster("render");
const reconcilerMain = reconcilerEntry();
const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-C", cwd, "-c", "user.name=bench", "-c", "user.email=bench@driftless.invalid", ...args], {
    encoding: "utf8",
  }).trim();

function configMapYaml(i: number): string {
  const data = benchConfigMap(`cm-${i}`, "unused", `v${i}`)["data"] as Record<string, string>;
  return [
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata:",
    `  name: cm-${i}`,
    "data:",
    ...Object.entries(data).map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`),
    "",
  ].join("\n");
}

/** base/ (999 ConfigMap files in `resources:`) and the sync directory, an overlay on it with a generator. */
async function writeKustomization(repoDir: string, syncDir: string, namespace: string): Promise<void> {
  const base = join(repoDir, "base");
  await mkdir(base, { recursive: true });
  await mkdir(join(repoDir, syncDir), { recursive: true });
  const files: string[] = [];
  for (let i = 0; i < objects - 1; i++) {
    files.push(`cm-${i}.yaml`);
    await writeFile(join(base, `cm-${i}.yaml`), configMapYaml(i));
  }
  await writeFile(
    join(base, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      "resources:",
      ...files.map((f) => `- ${f}`),
      "",
    ].join("\n"),
  );
  await writeFile(
    join(repoDir, syncDir, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      `namespace: ${namespace}`,
      "namePrefix: team-",
      "commonLabels:",
      "  app.kubernetes.io/part-of: bench",
      "  team: render",
      "resources:",
      "- ../base",
      "configMapGenerator:",
      "- name: settings",
      "  literals:",
      "  - mode=bench",
      "  - objects=1000",
      "",
    ].join("\n"),
  );
}

const kustomizeArgs = (dir: string): string[] => [
  "build",
  dir,
  "--enable-helm",
  `--helm-command=${join(toolsDir, "helm")}`,
  "--load-restrictor=LoadRestrictionsNone",
];

/** One `kustomize build` as the reconciler runs it (render.ts's arguments), under /usr/bin/time for its peak RSS. */
async function timedKustomize(dir: string): Promise<{ seconds: number; peakRssMiB: number; output: string }> {
  const t0 = performance.now();
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
    execFile(
      "/usr/bin/time",
      ["-f", "maxrss-kib=%M", join(toolsDir, "kustomize"), ...kustomizeArgs(dir)],
      { cwd: dir, maxBuffer: 256 * 1024 * 1024, encoding: "utf8" },
      (error, out, err) => (error === null ? resolve({ stdout: out, stderr: err }) : reject(error)),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  const kib = Number(/maxrss-kib=(\d+)/.exec(stderr)?.[1] ?? Number.NaN);
  return { seconds, peakRssMiB: Math.round(kib / 1024), output: stdout };
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("bench: timed out");
    await delay(50);
  }
}

async function procStatusMiB(pid: number, field: "VmHWM" | "VmRSS"): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024);
}

type Form = "plain" | "rendered";
interface Row {
  form: Form;
  objects: number;
  idleRssMiB: number;
  /** VmHWM when the commit was synced: the peak of syncing it. */
  syncPeakRssMiB: number;
  commitToSyncedS: number;
  passS: number;
  phases: Record<string, number>;
  renderingMessage: string | undefined;
}

/** One reconciler syncing one commit of the 1,000 objects, as a kustomization or as plain files. */
async function runReconciler(form: Form, round: number): Promise<Row> {
  const namespace = `render-${form}-${round}-${Date.now()}`;
  await client.create(namespaceMapping, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  const repoDir = join(root, `repo-${namespace}`);
  const remote = join(root, `remote-${namespace}.git`);
  execFileSync("git", ["init", "-q", "--bare", "-b", "main", remote]);
  execFileSync("git", ["init", "-q", "-b", "main", repoDir]);
  git(repoDir, "remote", "add", "origin", remote);
  await writeFile(join(repoDir, "README.md"), "bench\n");
  git(repoDir, "add", "-A");
  git(repoDir, "commit", "-q", "-m", "empty");
  git(repoDir, "push", "-q", "origin", "main");
  await client.create(repoSyncMapping, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace, annotations: { "configsync.gke.io/allow-empty-source": "true" } },
    spec: {
      sourceFormat: "unstructured",
      git: { repo: `file://${remote}`, branch: "main", dir: "config", auth: "none", period: "1s" },
    },
  });

  const metricsPort = await freeLoopbackPort();
  const logs: string[] = [];
  const child: ChildProcess = spawnBenchReconciler(
    { cluster, redis, root },
    {
      entry: reconcilerMain,
      sync: { kind: "RepoSync", namespace, name: "repo-sync" },
      metricsPort,
      key: namespace,
      extraArgs: [`--render-tools-dir=${toolsDir}`],
    },
  );
  child.stdout?.on("data", (chunk: Buffer) => logs.push(chunk.toString()));
  const pid = child.pid ?? 0;
  try {
    const idleRssMiB = await waitFor(
      async () => (logs.join("").includes('"pass finished"') ? procStatusMiB(pid, "VmRSS") : undefined),
      60_000,
    );
    if (form === "rendered") await writeKustomization(repoDir, "config", namespace);
    else {
      // The same objects as plain files: this namespace's render of the same kustomization, one object a file.
      const scratch = join(root, `scratch-${namespace}`);
      await writeKustomization(scratch, "config", namespace);
      const { output } = await timedKustomize(join(scratch, "config"));
      const documents = output.split(/^---\n/m).filter((d) => d.trim() !== "");
      if (documents.length !== objects) throw new Error(`bench: kustomize gave ${documents.length} objects`);
      await mkdir(join(repoDir, "config"), { recursive: true });
      for (const [i, document] of documents.entries())
        await writeFile(join(repoDir, "config", `object-${i}.yaml`), document);
      await rm(scratch, { recursive: true, force: true });
    }
    git(repoDir, "add", "-A");
    git(repoDir, "commit", "-q", "-m", `${objects} objects, ${form}`);
    const commit = git(repoDir, "rev-parse", "HEAD");
    const t0 = performance.now();
    git(repoDir, "push", "-q", "origin", "main");
    const rendering = await waitFor(async () => {
      const sync = await client.get(repoSyncMapping, namespace, "repo-sync");
      const status = (sync?.["status"] ?? {}) as {
        lastSyncedCommit?: string;
        conditions?: { type: string; status: string }[];
        rendering?: { message?: string };
      };
      const syncing = status.conditions?.find((c) => c.type === "Syncing");
      return status.lastSyncedCommit === commit && syncing?.status === "False"
        ? { message: status.rendering?.message }
        : undefined;
    }, 600_000);
    const commitToSyncedS = (performance.now() - t0) / 1000;
    const syncPeakRssMiB = await procStatusMiB(pid, "VmHWM");
    const passLine = await waitFor(
      async () =>
        logs
          .join("")
          .split("\n")
          .find((l) => l.includes('"pass finished"') && l.includes(commit) && l.includes('"synced":true')),
      60_000,
    );
    const pass = JSON.parse(passLine) as { seconds?: number; phases?: Record<string, number> };
    const applied = await client.list(configMapMapping, { namespace, labelSelector: "team=render" });
    const managed = applied.items.filter((o) => o.metadata.name.startsWith("team-")).length;
    if (managed !== objects) throw new Error(`bench: ${managed} of ${objects} objects in ${namespace}`);
    return {
      form,
      objects,
      idleRssMiB,
      syncPeakRssMiB,
      commitToSyncedS,
      passS: pass.seconds ?? Number.NaN,
      phases: pass.phases ?? {},
      renderingMessage: rendering.message,
    };
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

const rows: Row[] = [];
const renders: { seconds: number; peakRssMiB: number }[] = [];
try {
  // (a) The render step alone, on a checkout-like directory of its own.
  const renderDir = join(root, "render-alone");
  await writeKustomization(renderDir, "config", "render-alone");
  for (let i = 0; i < renderRounds; i++) {
    const { seconds, peakRssMiB, output } = await timedKustomize(join(renderDir, "config"));
    const count = output.split(/^---\n/m).filter((d) => d.trim() !== "").length;
    if (count !== objects) throw new Error(`bench: kustomize gave ${count} objects`);
    renders.push({ seconds, peakRssMiB });
  }
  // (b, c) Reconcilers, plain and rendered alternating.
  for (let round = 0; round < rounds; round++) {
    rows.push(await runReconciler("plain", round));
    rows.push(await runReconciler("rendered", round));
  }
} finally {
  await close();
}

console.log("| kustomize build, 1,000 objects (render step alone) | wall | kustomize peak RSS |");
console.log("| --- | --- | --- |");
for (const [i, r] of renders.entries())
  console.log(`| round ${i + 1} | ${r.seconds.toFixed(3)} s | ${r.peakRssMiB} MiB |`);
console.log("");
const phaseNames = ["fetch", "render", "read", "plan", "apply", "prune", "inventory", "status"];
console.log(
  `| form | reconciler RSS idle / peak syncing | commit → Synced | pass | ${phaseNames.join(" | ")} | status.rendering |`,
);
console.log(`| --- | --- | --- | --- | ${phaseNames.map(() => "---").join(" | ")} | --- |`);
for (const r of rows) {
  const cells = phaseNames.map((p) => (r.phases[p] === undefined ? "–" : `${r.phases[p].toFixed(3)}`));
  console.log(
    `| ${r.form} | ${r.idleRssMiB} / ${r.syncPeakRssMiB} MiB | ${r.commitToSyncedS.toFixed(2)} s | ${r.passS.toFixed(3)} s | ${cells.join(" | ")} | ${r.renderingMessage ?? "–"} |`,
  );
}
const out = process.env["BENCH_OUT"];
if (out !== undefined)
  await writeFile(out, JSON.stringify({ benchmark: "render", objects, toolsDir, renders, rows }, null, 2));
