/**
 * Temp folders a killed reconciler or render server left behind. Both make short-lived folders in
 * os.tmpdir() (a render's HOME and output, git's key files) and remove them as they go or at a graceful
 * stop; a SIGKILL or an OOM kill leaves them, and a pod's /tmp is an emptyDir that outlives the container.
 * So a start removes them, but only from a temp folder that is the process's alone: never a shared /tmp,
 * and in process mode only once an older reconciler of that folder has exited (older-reconcilers.ts).
 */
import { readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "./log.ts";

/**
 * "true" when os.tmpdir() belongs to this process alone: set by the manager for a process-mode child (with
 * a TMPDIR of its own) and by the pod spec. Unset (a reconciler run by hand, a test) nothing is swept.
 */
export const PrivateTmpdirEnv = "DRIFTLESS_PRIVATE_TMPDIR";

/**
 * What mkdtemp names from our prefixes (render.ts, render-client.ts, git's auth.ts): the prefix and six
 * characters. Exact, so a test's `driftless-render-server-…` or the default cache folder `driftless` never match.
 */
const ownTempFolder = /^driftless-(?:render|git-auth)-[A-Za-z0-9]{6}$/;

export function tmpdirIsPrivate(env: Readonly<Record<string, string | undefined>>): boolean {
  return env[PrivateTmpdirEnv] === "true";
}

/** Removes the folders this kind of process makes from `dir` (symlinks and files stay); returns their names. */
export async function removeOwnTempFolders(dir: string): Promise<readonly string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const own = entries.filter((entry) => entry.isDirectory() && ownTempFolder.test(entry.name)).map((e) => e.name);
  await Promise.all(own.map((name) => rm(join(dir, name), { recursive: true, force: true })));
  return own;
}

/**
 * At start, before anything of this run is made: what a killed predecessor left in os.tmpdir(), when the
 * environment says that folder is this process's alone. A sweep that fails is logged, never fatal.
 */
export async function sweepStaleTempFolders(
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
): Promise<readonly string[]> {
  if (!tmpdirIsPrivate(env)) return [];
  const dir = tmpdir();
  try {
    const removed = await removeOwnTempFolders(dir);
    if (removed.length > 0) log.info("removed temp folders a previous run left", { dir, folders: removed });
    return removed;
  } catch (error) {
    log.warn("could not remove the temp folders a previous run left", {
      dir,
      error: error instanceof Error ? error.message : String(error),
    });
    return [];
  }
}
