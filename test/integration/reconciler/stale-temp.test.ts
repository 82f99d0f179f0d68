/**
 * A reconciler or render server killed (SIGKILL, OOM) keeps no graceful stop, so its render folders stay in
 * its temp folder, which in a pod (an emptyDir) and in process mode (the child's state folder) outlives it.
 * The next start removes them, when its environment says that temp folder is its own. A reconciler still
 * running there (a previous leader's child, for seconds beside the new leader's) is waited for instead.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { reconcilerEnvironment, reconcilerNodeFlags } from "@driftless/controller";
import { stallingGit } from "@driftless/git/testing";
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
  removeAfter,
} from "../../support/index.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();
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

/** Locks and half-written packs in the cache repositories under `cache`: what a git mid-fetch holds. */
async function gitLeftovers(cache: string): Promise<string[]> {
  const paths = await readdir(cache, { recursive: true });
  return paths
    .filter((path) => path.includes("repo.git/") && (path.endsWith(".lock") || /\/(tmp_|\.tmp-)[^/]*$/.test(path)))
    .sort();
}

/** A repository whose sync directory is a kustomization (so each pass renders) making Namespace `ns`. */
async function kustomizedRepo(t: TestContext, ns: string): Promise<TestRepo> {
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
  return repo;
}

/** The private temp folder (`dir`/tmp, made 0700), arguments and environment of RootSync `name`'s reconciler. */
async function reconcilerOf(
  name: string,
  dir: string,
): Promise<{ tmp: string; args: string[]; env: NodeJS.ProcessEnv }> {
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
  return { tmp, args, env: { ...process.env, ...reconcilerEnvironment, REDIS_URL: testEnv().redisUrl } };
}

test("a reconciler started after a killed one removes the render folder the killed one left in its own temp folder", async (t) => {
  const name = `stale-temp-${suffix()}`;
  const repo = await kustomizedRepo(t, `st-${suffix()}`);
  const commit = await repo.commit("needs rendering");
  await createRootSync(name, repo);
  const dir = await mkdtemp(join(tmpdir(), "driftless-stale-temp-"));
  removeAfter(t, dir);
  const { tmp, args, env } = await reconcilerOf(name, dir);

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
  removeAfter(t, dir);
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

test("a reconciler started beside a running one of its state folder (a previous leader's) waits for it to exit, leaving its render folder and its git's locks alone", async (t) => {
  const name = `shared-state-${suffix()}`;
  const repo = await kustomizedRepo(t, `ss-${suffix()}`);
  const first = await repo.commit("needs rendering");
  await createRootSync(name, repo, {
    spec: { git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none", period: "1s" } },
  });
  const dir = await mkdtemp(join(tmpdir(), "driftless-shared-state-"));
  removeAfter(t, dir);
  const cache = join(dir, "cache");
  const { tmp, args, env } = await reconcilerOf(name, dir);
  // The old leader's child fetches through a git whose fetches hang mid-transfer once asked to.
  const stalling = await stallingGit(dir);
  const old = run(t, args, tmp, { ...env, PATH: `${stalling.binDir}:${process.env["PATH"] ?? ""}` });
  await rootSynced(name, first);
  const rendered = await eventually(async () => {
    const folders = await renderFolders(tmp);
    return folders.length > 0 ? folders : undefined;
  });
  await writeFile(stalling.stallFile, "");
  await repo.write("big.bin", randomBytes(3 * 1024 * 1024).toString("base64"));
  const second = await repo.commit("a commit too big to arrive");
  const held = await eventually(
    async () => {
      // Stalled once the pack is part-written: its lock and its temporary pack file then stay as they are.
      const leftovers = await gitLeftovers(cache);
      return leftovers.some((path) => path.includes("/objects/pack/")) ? leftovers : undefined;
    },
    { what: `the old reconciler's fetch stalled mid-transfer (${old.output()})` },
  );

  // Frozen, it renews no job lock: within 15 s the sync's job is the next reconciler's, as when a deposed
  // leader's child loses Redis. Its git, a process group of its own, still holds its locks.
  old.kill("SIGSTOP");

  const next = run(t, args, tmp, env);
  const waiting = "an older reconciler runs on this state folder";
  const kept = async (): Promise<{ renders: string[]; locks: string[] }> => {
    const [folders, leftovers] = [await renderFolders(tmp), await gitLeftovers(cache)];
    return { renders: rendered.filter((f) => folders.includes(f)), locks: held.filter((p) => leftovers.includes(p)) };
  };
  // It waits, or (without the wait) removes what the old one holds: its start sweep at once, its fetch later.
  await eventually(async () => next.output().includes(waiting) || (await kept()).locks.length < held.length, {
    timeoutMs: 60_000,
    what: "the next reconciler waiting",
  });
  assert.deepEqual(await kept(), { renders: rendered, locks: held }, "what the running reconciler holds was removed");

  // Its stop (SIGTERM, as when its heartbeats end; SIGCONT to act on it) ends the hung fetch; the next one takes over.
  old.kill("SIGTERM");
  old.kill("SIGCONT");
  await old.exited;
  await rootSynced(name, second);
  assert.match(next.output(), /the older reconciler exited/);
});
