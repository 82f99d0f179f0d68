import { spawn } from "node:child_process";

/**
 * Runs one git process and collects its output, with a hard deadline.
 *
 * git starts helpers (git-remote-https, ssh, index-pack); killing only git would leave them
 * running and holding locks in the cache repository. So every git runs as the leader of its own
 * process group (and session, so ssh has no terminal to prompt on), and an abort or timeout kills
 * the whole group.
 */

export interface RunGitOptions {
  readonly gitBinary: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Written to stdin, which is then closed (at once when absent, so nothing waits on it). */
  readonly input?: string | undefined;
}

export interface GitOutput {
  readonly stdout: string;
  readonly stderr: string;
}

export const GitExit = {
  Failed: "failed",
  TimedOut: "timedOut",
  Aborted: "aborted",
} as const;
export type GitExit = (typeof GitExit)[keyof typeof GitExit];

/** A git process that did not exit 0. stderr is raw: redact before showing it to anyone. */
export class GitProcessError extends Error {
  readonly exit: GitExit;
  readonly exitCode: number | null;
  readonly stderr: string;
  readonly subcommand: string;

  constructor(subcommand: string, exit: GitExit, exitCode: number | null, stderr: string) {
    super(`git ${subcommand} ${exit === GitExit.Failed ? `exited with ${String(exitCode)}` : exit}`);
    this.name = "GitProcessError";
    this.subcommand = subcommand;
    this.exit = exit;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

// Enough for ls-remote of a pattern and for diagnostics; stderr keeps its tail, where git puts
// the fatal line after progress output.
const maxStdoutBytes = 64 * 1024 * 1024;
const maxStderrChars = 64 * 1024;

export function runGit(args: readonly string[], options: RunGitOptions): Promise<GitOutput> {
  const subcommand = args.find((arg) => !arg.startsWith("-")) ?? "";
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted === true) {
      reject(new GitProcessError(subcommand, GitExit.Aborted, null, ""));
      return;
    }
    const child = spawn(options.gitBinary, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: "pipe",
    });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let ended: GitExit | undefined;

    const killGroup = (why: GitExit): void => {
      ended ??= why;
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is already gone: nothing left to stop.
      }
    };
    const timer = setTimeout(() => killGroup(GitExit.TimedOut), options.timeoutMs);
    const onAbort = (): void => killGroup(GitExit.Aborted);
    options.signal?.addEventListener("abort", onAbort, { once: true });

    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes <= maxStdoutBytes) stdout.push(chunk);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-maxStderrChars);
    });
    // git may exit before reading stdin; the resulting EPIPE says nothing the exit code does not.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");

    let settled = false;
    const finish = (error: Error | undefined, code: number | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (error !== undefined) reject(error);
      else if (ended !== undefined) reject(new GitProcessError(subcommand, ended, code, stderr));
      else if (code !== 0) reject(new GitProcessError(subcommand, GitExit.Failed, code, stderr));
      else resolve({ stdout: Buffer.concat(stdout).toString("utf8"), stderr });
    };
    // "close" comes after every holder of git's stdout/stderr (ssh, remote helpers) has exited,
    // so a resolved run leaves no helper behind.
    child.once("error", (error) => finish(error, null));
    child.once("close", (code) => finish(undefined, code));
  });
}
