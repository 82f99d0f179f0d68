/**
 * Proves that a path a kustomization names stays inside the repository checkout, symlinks followed,
 * as kustomize would resolve it: joined lexically to the kustomization's real directory (Go's
 * filepath.Join cleans `a/../b` before the file system sees it), then opened, following symlinks.
 */
import { lstat, readdir, realpath, stat } from "node:fs/promises";
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

  /**
   * Every symlink below the real directory `dir` (a chart helm reads whole) must lead inside the root.
   * helm's loader follows symlinked directories too, so their real directories are checked as well,
   * each once (a loop ends here; helm reports it). Symlinks inside the repository stay allowed:
   * charts of a monorepo share templates and files that way, and helm supports it.
   */
  async checkTreeBelow(dir: string, where: string, seen = new Set<string>()): Promise<void> {
    if (seen.has(dir)) return;
    seen.add(dir);
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await this.checkTreeBelow(path, where, seen);
      if (!entry.isSymbolicLink()) continue;
      const refuse = (why: string): RenderingError =>
        new RenderingError(`${where}: ${this.show(path)} ${why}; a render reads only files of the repository`);
      let target: string;
      try {
        target = await realpath(path);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") throw refuse("is a dangling symlink");
        throw refuse(`cannot be followed (${code ?? String(error)})`);
      }
      if (!this.contains(target)) throw refuse(`is a symlink to ${target}, outside the repository`);
      if ((await stat(target)).isDirectory()) await this.checkTreeBelow(target, where, seen);
    }
  }

  contains(path: string): boolean {
    return path === this.root || path.startsWith(this.root + sep);
  }

  refuse(where: string, raw: string, why: string): RenderingError {
    const shown = JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw);
    return new RenderingError(`${where} ${shown} ${why}; a kustomization may name only files of its own repository`);
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
      if (code !== "ENOENT" && code !== "ENOTDIR") throw this.refuse(where, raw, `cannot be read (${code ?? "?"})`);
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
