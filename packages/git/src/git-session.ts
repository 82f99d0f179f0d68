import { redactCredentials, type ErrorClass } from "@driftless/api";
import { adviceFor, classifyGitStderr, summarizeStderr } from "./classify.ts";
import { defaultErrorClass, GitFailureReason, GitFetchError } from "./errors.ts";
import { GitExit, GitProcessError, runGit } from "./run-git.ts";
import type { GitOutput } from "./run-git.ts";

/**
 * The git processes of one fetch or resolve: same environment, deadline, abort signal and
 * secrets to scrub. Turns a failed process into a classified GitFetchError whose message says
 * what was being fetched, from where (redacted), what the user can do, and git's own words.
 */
export interface GitSessionOptions {
  readonly gitBinary: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly secrets: readonly string[];
  readonly displayRepo: string;
  readonly description: string;
  /** The proxy the fetch goes through, redacted: a failure to reach it must say so. */
  readonly displayProxy?: string | undefined;
}

export interface RunOptions {
  /** The repository to operate on; absent for ls-remote. */
  readonly gitDir?: string | undefined;
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  /** For the message: "list refs of", "fetch", "check out" ... */
  readonly action: string;
  /** Written to git's stdin. */
  readonly input?: string | undefined;
}

export class GitSession {
  readonly #options: GitSessionOptions;

  constructor(options: GitSessionOptions) {
    this.#options = options;
  }

  get displayRepo(): string {
    return this.#options.displayRepo;
  }

  get description(): string {
    return this.#options.description;
  }

  /** Runs git; any failure becomes a classified GitFetchError. */
  async run(args: readonly string[], options: RunOptions): Promise<GitOutput> {
    try {
      return await this.runRaw(args, options);
    } catch (error) {
      throw this.toFetchError(error, options.action);
    }
  }

  /** Runs git and leaves a GitProcessError as is, for callers that fall back on some failures. */
  runRaw(args: readonly string[], options: RunOptions): Promise<GitOutput> {
    const env: NodeJS.ProcessEnv = { ...this.#options.env, ...options.env };
    if (options.gitDir !== undefined) env.GIT_DIR = options.gitDir;
    return runGit(args, {
      gitBinary: this.#options.gitBinary,
      cwd: options.cwd,
      env,
      timeoutMs: this.#options.timeoutMs,
      signal: this.#options.signal,
      input: options.input,
    });
  }

  /** Classifies a failure from runRaw (or anything else thrown while running git). */
  toFetchError(error: unknown, action: string): GitFetchError {
    if (error instanceof GitFetchError) return error;
    const { displayRepo, description, secrets, timeoutMs, displayProxy } = this.#options;
    const via = displayProxy === undefined ? "" : ` through proxy ${displayProxy}`;
    const base = `failed to ${action} ${description} of ${displayRepo}${via}`;
    if (!(error instanceof GitProcessError)) {
      const detail = redactCredentials(error instanceof Error ? error.message : String(error), secrets);
      return this.error(GitFailureReason.Unknown, `${base}: ${detail}`, error);
    }
    if (error.exit === GitExit.TimedOut) {
      return this.error(
        GitFailureReason.Timeout,
        `${base}: git ${error.subcommand} did not finish within ${String(Math.round(timeoutMs / 1000))}s; ${adviceFor(GitFailureReason.Timeout)}`,
        error,
      );
    }
    if (error.exit === GitExit.Aborted) {
      return this.error(GitFailureReason.Aborted, `${base}: aborted`, error);
    }
    const stderr = redactCredentials(error.stderr, secrets);
    const reason = classifyGitStderr(stderr);
    const advice = adviceFor(reason);
    const summary = summarizeStderr(stderr);
    const message = [
      base,
      advice,
      summary === "" ? `git ${error.subcommand} exited with ${String(error.exitCode)}` : `git: ${summary}`,
    ]
      .filter((part) => part !== "")
      .join(": ");
    // The cause carries raw stderr; replace it with the redacted copy so logging the cause chain
    // cannot print a secret.
    return this.error(reason, message, new GitProcessError(error.subcommand, error.exit, error.exitCode, stderr));
  }

  error(reason: GitFailureReason, message: string, cause?: unknown, errorClass?: ErrorClass): GitFetchError {
    return new GitFetchError({
      reason,
      errorClass: errorClass ?? defaultErrorClass(reason),
      message,
      repo: this.#options.displayRepo,
      target: this.#options.description,
      cause,
    });
  }
}
