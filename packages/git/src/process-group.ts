/**
 * Runs one program as the leader of its own process group (and session, so ssh has no terminal to
 * prompt on) with a hard deadline: git starts helpers (git-remote-https, ssh, index-pack), kustomize
 * starts helm and git, and killing only the program would leave them running and holding locks. An
 * abort or the deadline kills the whole group; the run settles once every holder of the pipes exited.
 */
import { spawn } from "node:child_process";

export interface ProcessGroupOptions {
  readonly cwd?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Written to stdin, which is then closed (at once when absent, so nothing waits on it). */
  readonly input?: string | undefined;
  readonly maxStdoutBytes: number;
  /** Past maxStdoutBytes: keep the first bytes and let it run (`truncate`), or kill the group (`kill`). */
  readonly onTooMuchOutput: "truncate" | "kill";
}

export const ProcessEnd = {
  TimedOut: "timedOut",
  Aborted: "aborted",
  TooMuchOutput: "tooMuchOutput",
} as const;
export type ProcessEnd = (typeof ProcessEnd)[keyof typeof ProcessEnd];

export interface ProcessGroupResult {
  /** Why the group was killed; undefined when the program exited by itself. */
  readonly killed: ProcessEnd | undefined;
  readonly code: number | null;
  readonly stdout: string;
  /** Its tail: programs print the fatal line after any progress or warnings. */
  readonly stderr: string;
}

const maxStderrChars = 64 * 1024;

/** Resolves with how the program ended, whatever its exit code; rejects only when it could not start. */
export function runProcessGroup(
  binary: string,
  args: readonly string[],
  options: ProcessGroupOptions,
): Promise<ProcessGroupResult> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted === true) {
      resolve({ killed: ProcessEnd.Aborted, code: null, stdout: "", stderr: "" });
      return;
    }
    const child = spawn(binary, args, { cwd: options.cwd, env: options.env, detached: true, stdio: "pipe" });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let killed: ProcessEnd | undefined;

    const killGroup = (why: ProcessEnd): void => {
      killed ??= why;
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is already gone: nothing left to stop.
      }
    };
    const timer = setTimeout(() => killGroup(ProcessEnd.TimedOut), options.timeoutMs);
    const onAbort = (): void => killGroup(ProcessEnd.Aborted);
    options.signal?.addEventListener("abort", onAbort, { once: true });

    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes <= options.maxStdoutBytes) stdout.push(chunk);
      else if (options.onTooMuchOutput === "kill") killGroup(ProcessEnd.TooMuchOutput);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-maxStderrChars);
    });
    // The program may exit before reading stdin; the resulting EPIPE says nothing the exit code does not.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");

    let settled = false;
    const finish = (error: Error | undefined, code: number | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (error !== undefined) reject(error);
      else resolve({ killed, code, stdout: Buffer.concat(stdout).toString("utf8"), stderr });
    };
    // "close" comes after every holder of the pipes (ssh, remote helpers, helm under kustomize) has exited.
    child.once("error", (error) => finish(error, null));
    child.once("close", (code) => finish(undefined, code));
  });
}
