import { link, mkdir, readdir, rm, rmdir } from "node:fs/promises";
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

/** Removes each path, then any directory the removals left empty (deepest first). */
export async function removePaths(root: string, paths: readonly string[]): Promise<void> {
  await Promise.all(
    paths.map((path) =>
      rm(join(root, path), { recursive: true, force: true }).catch((error: unknown) => {
        // "a/b" when "a" is (still) a file: a type change, and nothing to remove at that path.
        if ((error as NodeJS.ErrnoException).code !== "ENOTDIR") throw error;
      }),
    ),
  );
  const parents = new Set<string>();
  for (const path of paths) {
    for (let dir = posix.dirname(path); dir !== "." && !parents.has(dir); dir = posix.dirname(dir)) parents.add(dir);
  }
  const deepestFirst = [...parents].sort((a, b) => b.split("/").length - a.split("/").length);
  for (const dir of deepestFirst) {
    try {
      await rmdir(join(root, dir));
    } catch {
      // Not empty (other files remain) or already gone: both fine.
    }
  }
}
