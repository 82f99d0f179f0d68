import { ProcessEnd, runProcessGroup } from "./process-group.ts";

/**
 * Runs one git process and collects its output, with a hard deadline, as a process group
 * (process-group.ts): an abort or timeout kills git's helpers too, which would otherwise hold locks
 * in the cache repository.
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

// Enough for ls-remote of a pattern and for diagnostics.
const maxStdoutBytes = 64 * 1024 * 1024;

export async function runGit(args: readonly string[], options: RunGitOptions): Promise<GitOutput> {
  const subcommand = args.find((arg) => !arg.startsWith("-")) ?? "";
  const run = await runProcessGroup(options.gitBinary, args, {
    cwd: options.cwd,
    env: options.env,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    input: options.input,
    maxStdoutBytes,
    onTooMuchOutput: "truncate",
  });
  if (run.killed !== undefined)
    throw new GitProcessError(
      subcommand,
      run.killed === ProcessEnd.Aborted ? GitExit.Aborted : GitExit.TimedOut,
      run.code,
      run.stderr,
    );
  if (run.code !== 0) throw new GitProcessError(subcommand, GitExit.Failed, run.code, run.stderr);
  return { stdout: run.stdout, stderr: run.stderr };
}
