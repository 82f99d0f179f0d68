/**
 * The directory `kustomize build` runs on. Config Sync adds `buildMetadata: [originAnnotations]` to the
 * sync directory's kustomization before each build (kustomize then writes `config.kubernetes.io/origin`
 * on every rendered object) and lets kustomize pull remote charts below each kustomization's chart home,
 * both in place. The checkout is the reconciler's own, written only by its fetch (read-only to the render
 * container), so both go into a mirror instead: real directories from the repository root down to the
 * sync directory, to every kustomization and to every chart home a pull writes into, every other entry a
 * symlink to the checkout's. kustomize resolves a directory it loads to its real path (hence every
 * kustomization a real directory, and a symlink to a directory of the repository leading to the mirror's
 * counterpart) and names origins by the relative paths written in the kustomization, so every path names
 * the same file as in place, and every origin path is the one Config Sync writes (`path: ../base/cm.yaml`).
 */
import { mkdir, readdir, readFile, realpath, symlink, writeFile } from "node:fs/promises";
import type { Dirent } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { parseDocument, isSeq } from "yaml";
import { kustomizationFileNames } from "./kustomization-paths.ts";

/** kustomize's option name, and the annotation it writes. */
export const OriginAnnotationsOption = "originAnnotations";
export const OriginAnnotation = "config.kubernetes.io/origin";

export interface BuildDirectory {
  /** What to run `kustomize build` on: the mirror's sync directory, or `dir` itself. */
  readonly dir: string;
  /** The mirror's repository root and the checkout's, to name checkout paths in kustomize's messages. */
  readonly mirrorRoot?: string;
  readonly repositoryRoot?: string;
  /** kustomize's loader root for a real directory of the checkout: its counterpart in the mirror, if any. */
  readonly rootOf: (realDir: string) => string;
}

/**
 * The directory to build for `dir`. `writable`: directories of the checkout (paths below a kustomization's
 * real directory, as kustomize joins them) the render writes into, real in the mirror (made when missing).
 * `dir` itself when nothing is written and its kustomization already asks for origins, or cannot be read
 * as YAML (Config Sync leaves such a file alone, and kustomize's own message about it is the better one).
 */
export async function buildDirectory(
  dir: string,
  repositoryRoot: string,
  scratch: string,
  writable: readonly string[],
): Promise<BuildDirectory> {
  const realDir = await realpath(dir);
  const found = await kustomizationIn(realDir);
  const edited = found === undefined ? undefined : withOriginAnnotations(found.text);
  if (edited === undefined && writable.length === 0) return { dir, rootOf: (walked) => walked };
  const realRoot = await realpath(repositoryRoot);
  const syncDir = relative(realRoot, realDir);
  const real = new Set<string>();
  if (edited !== undefined) withAncestors(real, syncDir);
  if (writable.length > 0) {
    for (const kustomization of await kustomizationDirs(realRoot)) withAncestors(real, kustomization);
    for (const path of writable) {
      const landing = await nearestRealPath(path);
      if (isInside(realRoot, landing)) withAncestors(real, relative(realRoot, landing));
    }
  }
  const mirror = new Mirror(realRoot, join(scratch, "checkout-mirror"), real);
  const editedFile = edited === undefined || found === undefined ? undefined : join(syncDir, found.name);
  await mirror.directory("", editedFile);
  if (editedFile !== undefined && edited !== undefined) await writeFile(join(mirror.root, editedFile), edited);
  const rootOf = (realDir: string): string => mirror.counterpart(realDir);
  return { dir: rootOf(realDir), mirrorRoot: mirror.root, repositoryRoot: realRoot, rootOf };
}

/** The real path of `path`, or of its nearest existing ancestor with the rest appended (what a mkdir -p makes). */
export async function nearestRealPath(path: string): Promise<string> {
  const missing: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    const real = await realpath(at).catch(() => undefined);
    if (real !== undefined) return join(real, ...missing.reverse());
    if (dirname(at) === at) return path;
    missing.push(basename(at));
  }
}

export function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root + sep);
}

/** Adds a path relative to the repository root and every directory above it ("" is the root). */
function withAncestors(set: Set<string>, path: string): void {
  for (let at = path; ; at = dirname(at)) {
    set.add(at === "." ? "" : at);
    if (at === "." || at === "" || dirname(at) === at) return;
  }
}

/** Every directory holding a kustomization file, relative to the root; symlinked directories and `.git` are not entered. */
async function kustomizationDirs(realRoot: string): Promise<string[]> {
  const found: string[] = [];
  let level = [""];
  while (level.length > 0) {
    const next: string[] = [];
    for (const dir of level) {
      const entries = await readdir(join(realRoot, dir), { withFileTypes: true });
      if (entries.some((e) => !e.isDirectory() && (kustomizationFileNames as readonly string[]).includes(e.name)))
        found.push(dir);
      for (const entry of entries) if (entry.isDirectory() && entry.name !== ".git") next.push(join(dir, entry.name));
    }
    level = next;
  }
  return found;
}

/** The mirror of the checkout's real root: the directories in `real` are real, every other entry a symlink. */
class Mirror {
  readonly checkout: string;
  readonly root: string;
  readonly real: ReadonlySet<string>;
  readonly #children = new Map<string, string[]>();

  constructor(checkout: string, root: string, real: ReadonlySet<string>) {
    this.checkout = checkout;
    this.root = root;
    this.real = real;
    for (const path of real) {
      if (path === "") continue;
      const parent = dirname(path) === "." ? "" : dirname(path);
      this.#children.set(parent, [...(this.#children.get(parent) ?? []), path]);
    }
  }

  /** The mirror's path for a path of the checkout (unchanged when outside it). */
  counterpart(path: string): string {
    return isInside(this.checkout, path) ? join(this.root, relative(this.checkout, path)) : path;
  }

  /** Mirrors the directory at `path` (relative to the root), leaving out the file `skip`. */
  async directory(path: string, skip: string | undefined): Promise<void> {
    const from = join(this.checkout, path);
    const to = join(this.root, path);
    await mkdir(to, { recursive: path === "" });
    const entries = await readdir(from, { withFileTypes: true }).catch(missingAsEmpty);
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (child === skip) continue;
      if (entry.isDirectory() && this.real.has(child)) await this.directory(child, skip);
      else await symlink(await this.#linkTarget(join(from, entry.name), entry), join(to, entry.name));
    }
    // A chart home the checkout does not have yet.
    const present = new Set(entries.map((e) => e.name));
    for (const child of this.#children.get(path) ?? [])
      if (!present.has(basename(child))) await this.directory(child, skip);
  }

  /** A symlink to something in the repository leads to the mirror's counterpart, so a kustomization behind it is mirrored too. */
  async #linkTarget(path: string, entry: Dirent): Promise<string> {
    if (!entry.isSymbolicLink()) return path;
    const target = await realpath(path).catch(() => undefined);
    return target === undefined ? path : this.counterpart(target);
  }
}

function missingAsEmpty(error: unknown): Dirent[] {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
  throw error;
}

async function kustomizationIn(dir: string): Promise<{ name: string; text: string } | undefined> {
  for (const name of kustomizationFileNames) {
    const text = await readFile(join(dir, name), "utf8").catch(() => undefined);
    if (text !== undefined) return { name, text };
  }
  return undefined;
}

/**
 * The kustomization with `originAnnotations` added to `buildMetadata`; undefined when it has it
 * already or is not a YAML mapping (left to kustomize).
 */
export function withOriginAnnotations(text: string): string | undefined {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return undefined;
  const contents: unknown = doc.toJS();
  if (contents === null || typeof contents !== "object" || Array.isArray(contents)) return undefined;
  const current = doc.get("buildMetadata");
  if (current === undefined || current === null) {
    doc.set("buildMetadata", [OriginAnnotationsOption]);
    return doc.toString();
  }
  if (!isSeq(current)) return undefined;
  if (current.items.some((item) => String((item as { value?: unknown }).value ?? item) === OriginAnnotationsOption))
    return undefined;
  current.add(OriginAnnotationsOption);
  return doc.toString();
}
