/**
 * SIGTERM while a process is still starting (its first API request held at a proxy): the reconciler and the
 * manager stop in order once the start is done and exit 0, instead of being ended by the signal (143).
 */
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { reconcilerEnvironment, reconcilerNodeFlags } from "@driftless/controller";
import { findRepoRoot } from "@driftless/local-cluster";
import {
  createRootSync,
  eventually,
  rootSyncNamespace,
  suffix,
  testEnv,
  TestRepo,
  removeAfter,
} from "../../support/index.ts";
import { startApiProxy, type ApiProxy } from "./api-proxy.ts";

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Holds every request from now on until the returned release is called. */
function holdRequests(proxy: ApiProxy): () => void {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  proxy.hold = () => released;
  return () => {
    proxy.hold = undefined;
    release();
  };
}

/** Starts `args` under Node, SIGTERMs it while its first API request is held, and returns how it ended. */
async function sigtermDuringStart(
  t: TestContext,
  proxy: ApiProxy,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<{ readonly exit: Exit; readonly output: string }> {
  const release = holdRequests(proxy);
  const before = proxy.requests.length;
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const chunks: string[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  await eventually(() => proxy.requests.length > before, {
    what: "the start's first API request",
    timeoutMs: 60_000,
  });
  child.kill("SIGTERM");
  // The signal is delivered while the request still waits; then the start may go on.
  await eventually(() => chunks.join("").includes('"stopping"') || child.signalCode !== null, {
    what: "the signal to be taken",
  });
  release();
  return { exit: await exited, output: chunks.join("") };
}

test("a reconciler given SIGTERM while it starts finishes the start, stops in order and exits 0", async (t) => {
  const proxy = await startApiProxy(t);
  const name = `signal-start-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/cm.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" } }),
  );
  await repo.commit("one config map");
  await createRootSync(name, repo);
  const dir = await mkdtemp(join(tmpdir(), "driftless-signal-start-"));
  removeAfter(t, dir);

  const { exit, output } = await sigtermDuringStart(
    t,
    proxy,
    [
      ...reconcilerNodeFlags(),
      join(findRepoRoot(), "apps", "reconciler", "src", "main.ts"),
      "--sync-kind=RootSync",
      `--sync-name=${name}`,
      `--sync-namespace=${rootSyncNamespace}`,
      `--kubeconfig=${proxy.kubeconfig}`,
      `--queue-prefix=t${suffix()}`,
      `--cache-dir=${join(dir, "cache")}`,
      "--allow-file-repos",
    ],
    { ...reconcilerEnvironment, REDIS_URL: testEnv().redisUrl },
  );

  assert.deepEqual(exit, { code: 0, signal: null }, output);
  assert.match(output, /"msg":"stopping","[^\n]*"signal":"SIGTERM"/);
});

test("a manager given SIGTERM while it starts finishes the start, stops in order and exits 0", async (t) => {
  const proxy = await startApiProxy(t);
  const id = `m${suffix()}`;
  const stateDir = await mkdtemp(join(tmpdir(), `driftless-signal-start-${id}-`));
  removeAfter(t, stateDir);
  const env = testEnv();

  const { exit, output } = await sigtermDuringStart(
    t,
    proxy,
    [
      join(findRepoRoot(), "apps", "manager", "src", "main.ts"),
      "--kubeconfig",
      proxy.kubeconfig,
      "--reconciler-mode",
      "process",
      "--queue-prefix",
      `t${id}`,
      // Selects no sync: the manager only starts and stops.
      "--sync-selector",
      `driftless.test/none=${id}`,
      "--lease-name",
      `driftless-manager-${id}`,
      "--state-dir",
      stateDir,
    ],
    { KUBECONFIG: "", REDIS_URL: env.redisAddress, REDIS_PASSWORD: env.redisPassword },
  );

  assert.deepEqual(exit, { code: 0, signal: null }, output);
  assert.match(output, /"msg":"stopping","[^\n]*"signal":"SIGTERM"/);
});
