/**
 * Runs kustomize or helm with a deadline and bounded output, as a process group (kustomize starts helm
 * and, with shell access, git): a hung chart repository or URL resource never holds a pass, and leaves
 * no helper behind.
 */
import { ProcessEnd, runProcessGroup } from "@driftless/git";

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

const exitOf = {
  [ProcessEnd.TimedOut]: ToolExit.TimedOut,
  [ProcessEnd.Aborted]: ToolExit.Aborted,
  [ProcessEnd.TooMuchOutput]: ToolExit.TooMuchOutput,
} as const;

export async function runTool(binary: string, args: readonly string[], options: RunToolOptions): Promise<string> {
  let run;
  try {
    run = await runProcessGroup(binary, args, { ...options, onTooMuchOutput: "kill" });
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    const exit = failure.code === "ENOENT" ? ToolExit.NotFound : ToolExit.Failed;
    throw new ToolProcessError(binary, exit, null, "", failure.message, failure);
  }
  if (run.killed !== undefined)
    throw new ToolProcessError(binary, exitOf[run.killed], run.code, run.stdout, run.stderr);
  if (run.code !== 0) throw new ToolProcessError(binary, ToolExit.Failed, run.code, run.stdout, run.stderr);
  return run.stdout;
}
