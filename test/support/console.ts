/** `driftless console --no-open` as a user runs it: a child process, its printed address, stopped with the test. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { findRepoRoot } from "@driftless/local-cluster";
import { eventually } from "./eventually.ts";

export interface RunningConsole {
  /** The printed address, secret included. */
  readonly url: string;
  /** The same origin without the secret. */
  readonly origin: string;
  readonly port: number;
}

export async function startConsole(t: TestContext, ...args: string[]): Promise<RunningConsole> {
  const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");
  const child = spawn(process.execPath, [cli, "console", "--no-open", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  t.after(async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    // One stuck in its shutdown is killed: a hook that never ends skips the test's later clean-up too.
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(killer);
  });
  let url = "";
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`driftless console exited ${child.exitCode}: ${out}`);
      url = /driftless console: (http:\/\/\S+)/.exec(out)?.[1] ?? "";
      return url !== "";
    },
    { what: "driftless console to print its address" },
  );
  const parsed = new URL(url);
  return { url, origin: parsed.origin, port: Number(parsed.port) };
}
