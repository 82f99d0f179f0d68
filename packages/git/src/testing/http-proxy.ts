import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Test-only: Debian's tinyproxy on 127.0.0.1, in the foreground, its log kept in memory. A request
 * git sends through it shows in the log as `Request (file descriptor N): GET http://...`, which is
 * how a test proves the fetch went through the proxy and not around it.
 */
export interface HttpProxy {
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The request lines tinyproxy logged so far (`GET http://127.0.0.1:1234/repo.git/info/refs?...`). */
  requests(): string[];
  close(): Promise<void>;
}

export async function startHttpProxy(binary = "tinyproxy"): Promise<HttpProxy> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(binary, await freePort());
    } catch (error) {
      // Another process took the port between freePort and tinyproxy's bind: try another one.
      if (attempt >= 3) throw error;
    }
  }
}

async function startOnce(binary: string, port: number): Promise<HttpProxy> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-tinyproxy-"));
  const config = join(dir, "tinyproxy.conf");
  await writeFile(
    config,
    [`Port ${String(port)}`, "Listen 127.0.0.1", "Timeout 60", "LogLevel Info", "MaxClients 50", "Allow 127.0.0.1"]
      .map((line) => `${line}\n`)
      .join(""),
  );
  // -d: foreground, logging to stdout when no LogFile is set.
  const child = spawn(binary, ["-d", "-c", config], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!log.includes("Accepting connections")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await close();
      throw new Error(`tinyproxy did not start on port ${String(port)}:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    port,
    url: `http://127.0.0.1:${String(port)}`,
    requests: () => [...log.matchAll(/Request \(file descriptor \d+\): (.*)$/gm)].map((m) => m[1] ?? ""),
    close,
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
