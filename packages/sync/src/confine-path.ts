/**
 * Proves that a path a kustomization names stays inside the repository checkout, symlinks followed,
 * as kustomize would resolve it: joined lexically to the kustomization's real directory (Go's
 * filepath.Join cleans `a/../b` before the file system sees it), then opened, following symlinks.
 */
import { lstat, readdir, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { RenderingError } from "./render-error.ts";

/**
 * What kustomize fetches instead of reading a file: an http(s) URL (any file field, through its
 * loader) or a git repository (resources and components: a scheme, `user@host:path`, `github.com/…`,
 * optionally behind `git::`).
 */
export function isRemoteTarget(raw: string): boolean {
  const value = raw.replace(/^git::/i, "");
  return (
    /^https?:/i.test(value) ||
    /^(ssh|file):\/\//i.test(value) ||
    /^[a-zA-Z][a-zA-Z0-9-]*@/.test(value) ||
    /^github\.com[/:]/i.test(value)
  );
}

export class PathConfinement {
  /** The checkout's real path: every file a render reads must be at or below it. */
  readonly root: string;

  private constructor(root: string) {
    this.root = root;
  }

  static async of(repositoryRoot: string): Promise<PathConfinement> {
    return new PathConfinement(await realpath(repositoryRoot));
  }

  /** `path` relative to the root, for messages. */
  show(path: string): string {
    return relative(this.root, path) || ".";
  }

  /**
   * The real path `raw` names from the real directory `base`, proven inside the root; undefined when
   * nothing is there (kustomize then reports the missing file itself, and nothing can leak).
   */
  async resolve(base: string, raw: string, where: string): Promise<string | undefined> {
    if (isAbsolute(raw)) throw this.refuse(where, raw, "is an absolute path");
    const lexical = resolve(base, raw);
    if (!this.contains(lexical)) throw this.refuse(where, raw, "leaves the repository");
    const real = await this.realOrMissing(lexical, where, raw);
    if (real.path !== undefined && !this.contains(real.path))
      throw this.refuse(where, raw, `is a symlink to ${real.path}, outside the repository`);
    if (real.path === undefined && !this.contains(real.parent))
      throw this.refuse(where, raw, `passes through a symlink to ${real.parent}, outside the repository`);
    return real.path;
  }

  /** Every symlink below `dir` (a chart helm reads whole) must point inside the root. */
  async checkSymlinksBelow(dir: string, where: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        const target = await realpath(path).catch(() => undefined);
        if (target !== undefined && !this.contains(target))
          throw new RenderingError(
            `${where}: ${this.show(path)} is a symlink to ${target}, outside the repository; a render reads only files of the repository`,
          );
      } else if (entry.isDirectory()) await this.checkSymlinksBelow(path, where);
    }
  }

  contains(path: string): boolean {
    return path === this.root || path.startsWith(this.root + sep);
  }

  refuse(where: string, raw: string, why: string): RenderingError {
    return new RenderingError(
      `${where} ${JSON.stringify(raw)} ${why}; a kustomization may name only files of its own repository`,
    );
  }

  /** The real path when it exists, else the real path of its nearest existing ancestor. */
  private async realOrMissing(
    path: string,
    where: string,
    raw: string,
  ): Promise<{ path: string | undefined; parent: string }> {
    try {
      return { path: await realpath(path), parent: path };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ELOOP") throw this.refuse(where, raw, "is a symlink loop");
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
    }
    // A dangling symlink is as bad as one that resolves outside: kustomize would follow it.
    const link = await lstat(path).catch(() => undefined);
    if (link?.isSymbolicLink() === true) throw this.refuse(where, raw, "is a dangling symlink");
    const up = dirname(path);
    if (up === path) return { path: undefined, parent: path };
    const above = await this.realOrMissing(up, where, raw);
    return { path: undefined, parent: above.path === undefined ? above.parent : join(above.path, basename(path)) };
  }
}
