import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { freeLoopbackPort } from "./ports.ts";
import { isAlive, startProcess, type ProcessRecord } from "./processes.ts";
import { tailLog } from "./logs.ts";

export interface RedisServer {
  /** `redis://127.0.0.1:<port>`, never with the password. */
  readonly url: string;
  readonly port: number;
  /** The default user's (admin) password: always set, since driftless refuses an open Redis. */
  readonly password: string;
  readonly process: ProcessRecord;
}

export interface StartRedisOptions {
  readonly dir: string;
  readonly detached: boolean;
  /** Default: a free loopback port. Given, to restart a server where its clients expect it. */
  readonly port?: number;
  /**
   * `requirepass` (the admin password), written to a config file (mode 0600) so it is not in the
   * server's command line. Default: a random one.
   */
  readonly password?: string;
}

/**
 * Starts a real redis-server (Debian's package) on a loopback port with persistence off:
 * queues are not the source of truth (every job is recomputed from Git and the cluster).
 */
export async function startRedis(options: StartRedisOptions): Promise<RedisServer> {
  const which = spawnSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" });
  const binary = which.stdout.trim();
  if (which.status !== 0 || binary === "") {
    throw new Error("local-cluster: redis-server is not installed (apt-get install redis-server)");
  }
  await mkdir(options.dir, { recursive: true });
  const port = options.port ?? (await freeLoopbackPort());
  const config = join(options.dir, "redis.conf");
  const password = options.password ?? randomBytes(24).toString("hex");
  // Redis reads `requirepass` in double quotes with C-like escapes.
  await writeFile(config, `requirepass ${JSON.stringify(password)}\n`, { mode: 0o600 });
  const proc = await startProcess({
    name: "redis-server",
    binary,
    logFile: join(options.dir, "redis.log"),
    detached: options.detached,
    args: [
      config,
      ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", options.dir],
    ],
  });
  const deadline = Date.now() + 10_000;
  while (!(await answersPing(port, password))) {
    if (!isAlive(proc.pid)) throw new Error(`local-cluster: redis-server exited: ${await tailLog(proc.logFile)}`);
    if (Date.now() > deadline) throw new Error(`local-cluster: redis-server not answering on port ${port}`);
    await delay(50);
  }
  return { url: `redis://127.0.0.1:${port}`, port, password, process: proc };
}

function answersPing(port: number, password: string | undefined): Promise<boolean> {
  return new Promise((resolvePing) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.setTimeout(1_000);
    socket.once("connect", () => {
      // RESP arrays, so a password of any bytes goes through.
      if (password !== undefined) socket.write(command("AUTH", password));
      socket.write(command("PING"));
    });
    let replies = "";
    socket.on("data", (data) => {
      replies += data.toString();
      if (!replies.endsWith("\r\n")) return;
      if (password !== undefined && !replies.includes("\r\n", replies.indexOf("\r\n") + 2)) return;
      socket.destroy();
      resolvePing(replies.includes("+PONG"));
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolvePing(false);
    });
    socket.once("error", () => resolvePing(false));
  });
}

function command(...words: string[]): string {
  return `*${words.length}\r\n${words.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join("")}`;
}
