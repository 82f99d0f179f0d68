/**
 * The reconciler's render server as a process of its own, laid out as in a pod: it reads a checkout folder
 * (the reconciler's cache, read-only there) and listens on a socket, with no Redis and no kubeconfig.
 */
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { eventually } from "./eventually.ts";
import { removeAfter } from "./cleanup.ts";

export interface RunningRenderServer {
  /** The reconciler's cache: the only folder the server renders from. */
  readonly cacheDir: string;
  readonly socket: string;
  /** A folder without kustomize or helm, for a reconciler that must render through the server alone. */
  readonly noToolsDir: string;
}

/** Starts `driftless-reconciler --render-server` (stopped with the test) and resolves once it listens. */
export async function startRenderServer(t: TestContext, renderToolsDir: string): Promise<RunningRenderServer> {
  const cacheDir = await mkdtemp(join(tmpdir(), "driftless-render-pod-cache-"));
  const socketDir = await mkdtemp(join(tmpdir(), "driftless-render-pod-"));
  removeAfter(t, cacheDir);
  removeAfter(t, socketDir);
  const socket = join(socketDir, "render.sock");
  const server = spawn(
    process.execPath,
    [
      "apps/reconciler/src/main.ts",
      "--render-server",
      socket,
      "--render-source-root",
      cacheDir,
      "--render-tools-dir",
      renderToolsDir,
    ],
    // As in the render container: no Redis, no kubeconfig.
    { env: { PATH: process.env["PATH"] ?? "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const output: string[] = [];
  server.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  server.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise((resolve) => server.once("exit", resolve));
  t.after(async () => {
    server.kill("SIGTERM");
    // One stuck in its shutdown is killed: a hook that never ends skips the test's later clean-up too.
    const killer = setTimeout(() => server.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(killer);
  });
  await eventually(() => output.some((line) => line.includes("serving renders")), {
    what: `the render server listening (${output.join("")})`,
  });
  return { cacheDir, socket, noToolsDir: join(socketDir, "no-tools") };
}
