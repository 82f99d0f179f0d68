import { spawnSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { createConnection } from "node:net";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { freeLoopbackPort } from "./ports.ts";
import { isAlive, startProcess, type ProcessRecord } from "./processes.ts";
import { tailLog } from "./logs.ts";

export interface RedisServer {
  readonly url: string;
  readonly process: ProcessRecord;
}

/**
 * Starts a real redis-server (Debian's package) on a free loopback port with persistence off:
 * queues are not the source of truth (every job is recomputed from Git and the cluster).
 */
export async function startRedis(options: { readonly dir: string; readonly detached: boolean }): Promise<RedisServer> {
  const which = spawnSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" });
  const binary = which.stdout.trim();
  if (which.status !== 0 || binary === "") {
    throw new Error("local-cluster: redis-server is not installed (apt-get install redis-server)");
  }
  await mkdir(options.dir, { recursive: true });
  const port = await freeLoopbackPort();
  const proc = await startProcess({
    name: "redis-server",
    binary,
    logFile: join(options.dir, "redis.log"),
    detached: options.detached,
    args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", options.dir],
  });
  const deadline = Date.now() + 10_000;
  while (!(await answersPing(port))) {
    if (!isAlive(proc.pid)) throw new Error(`local-cluster: redis-server exited: ${await tailLog(proc.logFile)}`);
    if (Date.now() > deadline) throw new Error(`local-cluster: redis-server not answering on port ${port}`);
    await delay(50);
  }
  return { url: `redis://127.0.0.1:${port}`, process: proc };
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolvePing) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.setTimeout(1_000);
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      socket.destroy();
      resolvePing(data.toString().startsWith("+PONG"));
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolvePing(false);
    });
    socket.once("error", () => resolvePing(false));
  });
}
