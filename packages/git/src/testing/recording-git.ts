import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Test-only: a `git` that appends its argv to a log and then runs the real git. Lets a test see
 * exactly which git commands the fetcher ran (and that no secret was on a command line, where
 * `ps` would show it).
 */
export interface RecordingGit {
  readonly binary: string;
  /** The argv of every call so far, oldest first. */
  calls(): Promise<string[][]>;
  /** Subcommands of every call so far, e.g. ["ls-remote", "fetch"]. */
  subcommands(): Promise<string[]>;
  clear(): Promise<void>;
}

export async function recordingGit(dir: string): Promise<RecordingGit> {
  const binary = join(dir, "git-recorder");
  const log = join(dir, "git-calls.log");
  await writeFile(log, "");
  // \037 (unit separator) between arguments, one call per line.
  await writeFile(
    binary,
    `#!/bin/sh\nfor a in "$@"; do printf '%s\\037' "$a"; done >> '${log}'\necho >> '${log}'\nexec git "$@"\n`,
  );
  await chmod(binary, 0o755);
  const calls = async (): Promise<string[][]> =>
    (await readFile(log, "utf8"))
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => line.split("\x1f").slice(0, -1));
  return {
    binary,
    calls,
    subcommands: async () => (await calls()).map((args) => args.find((arg) => !arg.startsWith("-")) ?? ""),
    clear: () => writeFile(log, ""),
  };
}
