import { spawn } from "node:child_process";

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a host tool (ip, iptables, ctr, openssl, tar) to completion and collects its output. Never throws on exit code. */
export function runCommand(command: string, args: readonly string[]): Promise<CommandResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, [...args], { stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.once("error", reject);
    child.once("close", (code) =>
      resolveRun({
        code: code ?? 1,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
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
