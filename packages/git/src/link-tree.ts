import { link, lstat, mkdir, readdir, rm, rmdir } from "node:fs/promises";
import { join, posix } from "node:path";

/**
 * Filesystem steps of an incremental checkout: copy a checkout as hard links (no file data is
 * written, so 10 000 files cost a fraction of writing them), then remove the paths a commit
 * changed, so git can write them as new files. Nothing is ever written through a shared inode:
 * changed paths are unlinked, not overwritten, which keeps every older checkout intact.
 */

export async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to);
  const entries = await readdir(from, { withFileTypes: true });
  await Promise.all(
    entries.map((entry) =>
      // Symlinks are linked as symlinks: link(2) does not follow them.
      entry.isDirectory()
        ? linkTree(join(from, entry.name), join(to, entry.name))
        : link(join(from, entry.name), join(to, entry.name)),
    ),
  );
}

/**
 * A path from a git tree that is safe to join to a checkout: relative, no `..`, no `.git`
 * component. Git refuses to check out other paths, but they can exist in objects from a hostile
 * server (fetch does not fsck by default), and these paths are also given to rm.
 */
export function isSafeTreePath(path: string): boolean {
  if (path === "" || path.startsWith("/") || path.includes("\0") || path.includes("\\")) return false;
  if (posix.normalize(path) !== path) return false;
  return path.split("/").every((part) => part !== ".." && part !== "." && part.toLowerCase() !== ".git");
}

/**
 * The first directory on the way to `path` below `root` that is a symlink or not a directory, or undefined when
 * each one is a real directory or absent (mkdir makes real ones). lstat never follows a link, so a write or rm
 * at `path` that passed this check stays inside `root`.
 */
export async function blockedAncestor(
  root: string,
  path: string,
): Promise<{ readonly path: string; readonly symlink: boolean } | undefined> {
  const parts = path.split("/");
  for (let depth = 1; depth < parts.length; depth++) {
    const ancestor = parts.slice(0, depth).join("/");
    let info;
    try {
      info = await lstat(join(root, ancestor));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    if (!info.isDirectory()) return { path: ancestor, symlink: info.isSymbolicLink() };
  }
  return undefined;
}

/**
 * Removes each path, then any directory the removals left empty (deepest first). Shallower paths go first and
 * the paths of one depth (never inside each other) together, so a symlink the change removes is gone before
 * anything below its name is removed; callers make sure no other ancestor is a symlink (symlinkOnTheWay).
 */
export async function removePaths(root: string, paths: readonly string[]): Promise<void> {
  for (const level of byDepth(paths)) {
    await Promise.all(
      level.map((path) =>
        rm(join(root, path), { recursive: true, force: true }).catch((error: unknown) => {
          // "a/b" when "a" is (still) a file: a type change, and nothing to remove at that path.
          if ((error as NodeJS.ErrnoException).code !== "ENOTDIR") throw error;
        }),
      ),
    );
  }
  const deepestFirst = [...ancestorsOf(paths)].sort((a, b) => b.split("/").length - a.split("/").length);
  for (const dir of deepestFirst) {
    try {
      await rmdir(join(root, dir));
    } catch {
      // Not empty (other files remain) or already gone: both fine.
    }
  }
}

/**
 * Whether a directory on the way to any of `paths` below `root` is a symlink: removing or writing such a path
 * would follow it. lstat never follows one; each directory is checked once.
 */
export async function symlinkOnTheWay(root: string, paths: readonly string[]): Promise<boolean> {
  const found = await Promise.all(
    [...ancestorsOf(paths)].map((dir) =>
      lstat(join(root, dir)).then(
        (info) => info.isSymbolicLink(),
        () => false, // absent (an added directory) or below a file (a type change): nothing to follow
      ),
    ),
  );
  return found.includes(true);
}

/** Every proper ancestor directory of the paths (`a` and `a/b` for `a/b/c`). */
function ancestorsOf(paths: readonly string[]): Set<string> {
  const ancestors = new Set<string>();
  for (const path of paths) {
    for (let dir = posix.dirname(path); dir !== "." && !ancestors.has(dir); dir = posix.dirname(dir))
      ancestors.add(dir);
  }
  return ancestors;
}

/** Paths grouped by their number of components, shallowest group first. */
function byDepth(paths: readonly string[]): string[][] {
  const levels = new Map<number, string[]>();
  for (const path of paths) {
    const depth = path.split("/").length;
    const level = levels.get(depth) ?? [];
    level.push(path);
    levels.set(depth, level);
  }
  return [...levels.entries()].sort(([a], [b]) => a - b).map(([, level]) => level);
}
