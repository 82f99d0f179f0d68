/**
 * Process mode's state folders hold reconciler tokens: each must be a real directory of the
 * manager's own user that no other user can write. A folder another local user made first (in
 * a shared /tmp) would let them swap in files of their own and read what the manager writes there.
 */
import { lstatSync, mkdirSync, type Stats } from "node:fs";
import { lstat, mkdir } from "node:fs/promises";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";

/** A state folder the manager will not use: another user could read or replace what it writes there. */
export class UnsafeStateDirError extends DriftlessError {
  readonly path: string;

  constructor(path: string, problem: string) {
    super({
      code: KnvCode.Filesystem,
      errorClass: ErrorClass.Terminal,
      message:
        `state directory ${path} ${problem}: another local user could read the reconcilers' tokens. ` +
        `Remove it, or give --state-dir (DRIFTLESS_STATE_DIR) a directory of the manager's own user with mode 0700`,
    });
    this.path = path;
  }
}

/** Creates `path` (mode 0700) when absent; throws UnsafeStateDirError when it is not private. */
export async function ensurePrivateDir(path: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true, mode: 0o700 });
  } catch (error) {
    if (!inTheWay(error)) throw error;
  }
  assertPrivateDir(path, await lstat(path));
}

/** ensurePrivateDir for a constructor, so a manager on an unsafe folder refuses to start. */
export function ensurePrivateDirSync(path: string): void {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (error) {
    if (!inTheWay(error)) throw error;
  }
  assertPrivateDir(path, lstatSync(path));
}

/** A file or a (dangling) symlink where the folder should be: the lstat after names the problem. */
function inTheWay(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "EEXIST" || code === "ENOENT";
}

function assertPrivateDir(path: string, stats: Stats): void {
  const problem = whyNotPrivate(stats);
  if (problem !== undefined) throw new UnsafeStateDirError(path, problem);
}

/** lstat's view: a symlink is refused even when it points at a private directory (its target can change). */
function whyNotPrivate(stats: Stats): string | undefined {
  if (stats.isSymbolicLink()) return "is a symbolic link";
  if (!stats.isDirectory()) return "is not a directory";
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) return `is owned by uid ${stats.uid}, not the manager's uid ${uid}`;
  if ((stats.mode & 0o022) !== 0)
    return `can be written by its group or others (mode ${(stats.mode & 0o777).toString(8).padStart(4, "0")})`;
  return undefined;
}
