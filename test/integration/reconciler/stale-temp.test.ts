/**
 * A reconciler or render server killed (SIGKILL, OOM) keeps no graceful stop, so its render folders stay in
 * its temp folder, which in a pod (an emptyDir) and in process mode (the child's state folder) outlives it.
 * The next start removes them, when its environment says that temp folder is its own.
 */
import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { reconcilerEnvironment, reconcilerNodeFlags } from "@driftless/controller";
import { findRepoRoot } from "@driftless/local-cluster";
import { PrivateTmpdirEnv } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  suffix,
  testEnv,
  TestRepo,
} from "../../support/index.ts";

const renderToolsDir = execFileSync("bash", ["packages/sync/scripts/build-render-tools.sh"], { encoding: "utf8" })
  .trim()
  .split("\n")
  .at(-1)!;
const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);
const mainEntry = join(findRepoRoot(), "apps", "reconciler", "src", "main.ts");

interface Running {
  readonly output: () => string;
  readonly exited: Promise<unknown>;
  kill(signal: NodeJS.Signals): void;
}

/** apps/reconciler's program with `args`, its temp folder `tmp` marked as its own, as the manager and the pod spec do. */
function run(t: TestContext, args: readonly string[], tmp: string, env: NodeJS.ProcessEnv = process.env): Running {
  const child = spawn(process.execPath, [...reconcilerNodeFlags(), mainEntry, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...env, TMPDIR: tmp, [PrivateTmpdirEnv]: "true" },
  });
  const chunks: string[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  return { output: () => chunks.join(""), exited, kill: (signal) => child.kill(signal) };
}

async function renderFolders(tmp: string): Promise<string[]> {
  return (await readdir(tmp)).filter((name) => name.startsWith("driftless-render-")).sort();
}

test("a reconciler started after a killed one removes the render folder the killed one left in its own temp folder", async (t) => {
  const name = `stale-temp-${suffix()}`;
  const ns = `st-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }));
  await repo.write(
    "config/kustomization.yaml",
    yaml({ resources: ["ns.yaml"], configMapGenerator: [{ name: "generated", namespace: ns, literals: ["a=1"] }] }),
  );
  const commit = await repo.commit("needs rendering");
  await createRootSync(name, repo);
  const dir = await mkdtemp(join(tmpdir(), "driftless-stale-temp-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const tmp = join(dir, "tmp");
  await mkdir(tmp, { mode: 0o700 });
  const args = [
    "--sync-kind=RootSync",
    `--sync-name=${name}`,
    `--sync-namespace=${rootSyncNamespace}`,
    `--kubeconfig=${testEnv().kubeconfig}`,
    `--queue-prefix=t${suffix()}`,
    `--cache-dir=${join(dir, "cache")}`,
    `--render-tools-dir=${renderToolsDir}`,
    "--allow-file-repos",
  ];
  const env = { ...process.env, ...reconcilerEnvironment, REDIS_URL: testEnv().redisUrl };

  const killed = run(t, args, tmp, env);
  await rootSynced(name, commit);
  // The pass's render stays in the render cache until a graceful stop removes it.
  await eventually(async () => ((await renderFolders(tmp)).length > 0 ? true : undefined));
  killed.kill("SIGKILL");
  await killed.exited;
  // Read after the kill: a later pass may replace its render folder until the very moment it dies.
  const left = await renderFolders(tmp);
  assert.notDeepEqual(left, [], "SIGKILL ran no clean-up, so a render folder stays");

  const next = run(t, args, tmp, env);
  const now = await eventually(
    async () => {
      const folders = await renderFolders(tmp);
      return folders.some((f) => !left.includes(f)) ? folders : undefined;
    },
    { timeoutMs: 60_000, what: `the next reconciler's own render (${next.output()})` },
  );
  assert.deepEqual(
    now.filter((f) => left.includes(f)),
    [],
    "the killed reconciler's render folder is still there",
  );
});

test("a render server removes at start the render folders a killed one left in its own /tmp, and nothing else there", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "driftless-stale-render-tmp-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const tmp = join(dir, "tmp");
  const cache = join(dir, "cache");
  await mkdir(tmp, { mode: 0o700 });
  await mkdir(cache);
  // What a render killed mid-way leaves: its HOME with helm's caches and a part of its output.
  const stale = await mkdtemp(join(tmp, "driftless-render-"));
  await mkdir(join(stale, "rendered"));
  await writeFile(join(stale, "rendered", "rendered.yaml"), "kind: ConfigMap\n".repeat(1000));
  await mkdir(join(tmp, "someone-elses"));
  // As in the render container: no Redis, no kubeconfig.
  const server = run(
    t,
    ["--render-server", join(dir, "render.sock"), "--render-source-root", cache, "--render-tools-dir", renderToolsDir],
    tmp,
    { PATH: process.env["PATH"] ?? "" },
  );
  await eventually(() => server.output().includes("serving renders"), {
    what: `the render server listening (${server.output()})`,
  });
  assert.deepEqual(await readdir(tmp), ["someone-elses"]);
});
