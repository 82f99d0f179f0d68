import { spawn } from "node:child_process";

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a host tool (ip, iptables, ctr, openssl, tar) to completion and collects its output. Never throws
 * on exit code; one that outlives `timeoutMs` (a wedged containerd makes ctr wait forever) is killed
 * and reported as exit 124.
 */
export function runCommand(command: string, args: readonly string[], timeoutMs = 120_000): Promise<CommandResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, [...args], {
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
      killSignal: "SIGKILL",
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.once("error", reject);
    child.once("close", (code, signal) =>
      resolveRun({
        code: code ?? (signal === "SIGKILL" ? 124 : 1),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8") + (signal === "SIGKILL" ? `\n(killed after ${timeoutMs} ms)` : ""),
      }),
    );
  });
}

/** Like runCommand, but a non-zero exit is an error that names the command and quotes its stderr. */
export async function mustRun(command: string, args: readonly string[]): Promise<string> {
  const result = await runCommand(command, args);
  if (result.code !== 0) {
    throw new Error(
      `local-cluster: \`${command} ${args.join(" ")}\` failed (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}`,
    );
  }
  return result.stdout;
}
