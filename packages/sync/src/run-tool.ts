/**
 * Runs kustomize or helm with a deadline and bounded output. kustomize starts helm (and, with shell
 * access, git), so each tool runs as the leader of its own process group and the deadline or an
 * abort kills the whole group: a hung chart repository or URL resource never holds a pass, and
 * leaves no helper behind.
 */
import { spawn } from "node:child_process";

export interface RunToolOptions {
  readonly cwd?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** Written to stdin, which is then closed (at once when absent, so nothing waits on it). */
  readonly input?: string | undefined;
  /** Above this the tool is killed and the run fails: a runaway generator is not held in memory. */
  readonly maxStdoutBytes: number;
}

export const ToolExit = {
  Failed: "failed",
  TimedOut: "timedOut",
  Aborted: "aborted",
  TooMuchOutput: "tooMuchOutput",
  NotFound: "notFound",
} as const;
export type ToolExit = (typeof ToolExit)[keyof typeof ToolExit];

/** A tool that did not exit 0. stderr is raw (its tail): redact before showing it. */
export class ToolProcessError extends Error {
  readonly exit: ToolExit;
  readonly stdout: string;
  readonly stderr: string;

  constructor(tool: string, exit: ToolExit, code: number | null, stdout: string, stderr: string, cause?: unknown) {
    super(`${tool} ${exit === ToolExit.Failed ? `exited with ${String(code)}` : exit}`, { cause });
    this.name = "ToolProcessError";
    this.exit = exit;
    this.stdout = stdout;
    this.stderr = stderr;
  }
}

// The tail, where kustomize and helm print the error after any warnings.
const maxStderrChars = 64 * 1024;

export function runTool(binary: string, args: readonly string[], options: RunToolOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) {
      reject(new ToolProcessError(binary, ToolExit.Aborted, null, "", ""));
      return;
    }
    const child = spawn(binary, args, { cwd: options.cwd, env: options.env, detached: true, stdio: "pipe" });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let ended: ToolExit | undefined;

    const killGroup = (why: ToolExit): void => {
      ended ??= why;
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is already gone.
      }
    };
    const timer = setTimeout(() => killGroup(ToolExit.TimedOut), options.timeoutMs);
    const onAbort = (): void => killGroup(ToolExit.Aborted);
    options.signal.addEventListener("abort", onAbort, { once: true });

    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > options.maxStdoutBytes) killGroup(ToolExit.TooMuchOutput);
      else stdout.push(chunk);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-maxStderrChars);
    });
    child.stdin.on("error", () => undefined); // the tool may exit before reading stdin
    child.stdin.end(options.input ?? "");

    let settled = false;
    const finish = (error: NodeJS.ErrnoException | undefined, code: number | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      const out = Buffer.concat(stdout).toString("utf8");
      if (error !== undefined)
        reject(
          new ToolProcessError(
            binary,
            error.code === "ENOENT" ? ToolExit.NotFound : ToolExit.Failed,
            null,
            "",
            error.message,
            error,
          ),
        );
      else if (ended !== undefined) reject(new ToolProcessError(binary, ended, code, out, stderr));
      else if (code !== 0) reject(new ToolProcessError(binary, ToolExit.Failed, code, out, stderr));
      else resolve(out);
    };
    // "close" waits for every holder of the pipes (helm under kustomize) to exit.
    child.once("error", (error) => finish(error, null));
    child.once("close", (code) => finish(undefined, code));
  });
}
