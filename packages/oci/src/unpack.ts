/**
 * Unpacking image layers into one directory, in order, as a container runtime would (later layers
 * win; `.wh.` whiteouts delete), but refusing anything that could write outside it: absolute paths,
 * a `..` above the root, symlinks leading out, writes through a symlink, and more bytes or entries than allowed.
 */
import { link, lstat, mkdir, readdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { join, posix, sep } from "node:path";
import type { Transform } from "node:stream";
import { createGunzip, createZstdDecompress } from "node:zlib";
import { OciFailureReason, OciFetchError } from "./errors.ts";
import { readTar, TarEntryType, TarFormatError, type TarEntry, type TarStreamEntry } from "./tar.ts";

export interface UnpackLimits {
  /** Sum of all files' sizes across layers. */
  readonly maxTotalBytes: number;
  readonly maxFileBytes: number;
  /** Entries across layers: files, links, whiteouts and every directory made, those a path implies included. */
  readonly maxEntries: number;
  /** Segments in a path: deeper trees only multiply the directories each entry makes. */
  readonly maxDepth: number;
}

/** Generous for configuration, small enough that a hostile image cannot fill the reconciler's memory or disk. */
export const DefaultUnpackLimits: UnpackLimits = {
  maxTotalBytes: 128 * 1024 * 1024,
  maxFileBytes: 32 * 1024 * 1024,
  maxEntries: 100_000,
  maxDepth: 64,
};

const whiteoutPrefix = ".wh.";
const opaqueWhiteout = ".wh..wh..opq";

/** Tracks what the layers unpacked so far used of the limits. */
export class UnpackBudget {
  #bytes = 0;
  #entries = 0;
  readonly limits: UnpackLimits;

  constructor(limits: UnpackLimits = DefaultUnpackLimits) {
    this.limits = limits;
  }

  /** Bytes a layer's uncompressed tar may take: what is left plus room for tar headers. */
  get tarBytesLeft(): number {
    return this.limits.maxTotalBytes - this.#bytes + (this.limits.maxEntries - this.#entries) * 1024;
  }

  /** One more entry, or directory made: refused past maxEntries. */
  count(): void {
    if (++this.#entries > this.limits.maxEntries)
      throw unsafe(`the image has more than ${this.limits.maxEntries} entries`);
  }

  checkDepth(segments: readonly string[], name: string): void {
    if (segments.length > this.limits.maxDepth)
      throw unsafe(`the path ${JSON.stringify(name)} is more than ${this.limits.maxDepth} levels deep`);
  }

  spend(entry: TarEntry, name: string): void {
    this.count();
    if (entry.size > this.limits.maxFileBytes) throw unsafe(`${name} is larger than ${this.limits.maxFileBytes} bytes`);
    this.#bytes += entry.size;
    if (this.#bytes > this.limits.maxTotalBytes)
      throw unsafe(`the image's files add up to more than ${this.limits.maxTotalBytes} bytes`);
  }
}

function unsafe(why: string): OciFetchError {
  return new OciFetchError(OciFailureReason.UnsafeLayer, `refusing to unpack the image: ${why}`);
}

/**
 * The entry's path as segments below the root, cleaned as Go's filepath.Clean cleans it for Config Sync
 * (`a/../b.yaml` is `b.yaml`); throws for absolute paths and a `..` that climbs above the root.
 */
export function safeSegments(name: string): string[] {
  if (name.includes("\0")) throw unsafe(`the path ${JSON.stringify(name)} holds a NUL byte`);
  if (name.startsWith("/")) throw unsafe(`the layer holds an absolute path ${JSON.stringify(name)}`);
  const segments: string[] = [];
  for (const segment of name.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment !== "..") segments.push(segment);
    else if (segments.pop() === undefined)
      throw unsafe(`the path ${JSON.stringify(name)} leads out of the image's directory`);
  }
  return segments;
}

/** Whether a symlink at `segments` pointing at `target` stays inside the root (judged from where it is). */
function linkStaysInside(segments: readonly string[], target: string): boolean {
  if (target.startsWith("/")) return false;
  const resolved = posix.normalize(posix.join(...segments.slice(0, -1), target));
  return resolved !== ".." && !resolved.startsWith("../");
}

async function kindAt(path: string): Promise<"missing" | "dir" | "symlink" | "other"> {
  try {
    const s = await lstat(path);
    return s.isSymbolicLink() ? "symlink" : s.isDirectory() ? "dir" : "other";
  } catch {
    return "missing";
  }
}

async function realPathInside(root: string, path: string): Promise<boolean> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    return true; // nothing there: the caller reports the missing file
  }
  const realRoot = await realpath(root);
  return real === realRoot || real.startsWith(realRoot + sep);
}

/**
 * Creates the parent directories; a parent that is a symlink is refused, so every write lands where its path says.
 * Each directory made is charged as it is made: which exist depends on what the entries before did.
 */
async function ensureParents(
  root: string,
  segments: readonly string[],
  name: string,
  budget: UnpackBudget,
): Promise<string> {
  let dir = root;
  for (const segment of segments.slice(0, -1)) {
    dir = join(dir, segment);
    const kind = await kindAt(dir);
    if (kind === "symlink") throw unsafe(`${JSON.stringify(name)} would be written through the symlink ${segment}`);
    if (kind === "dir") continue;
    budget.count();
    if (kind === "other") await rm(dir, { force: true });
    await mkdir(dir);
  }
  return join(dir, segments.at(-1)!);
}

/**
 * The directory a whiteout's path names in the layers below, or undefined when a segment of it is missing, a
 * file or a symlink: such a whiteout hides nothing, as for go-containerregistry's Extract (Config Sync). Making
 * the path instead deleted the lower layer's file in its way (`a.yaml/.wh.x` pruned what a.yaml declared).
 */
async function whiteoutParent(root: string, segments: readonly string[]): Promise<string | undefined> {
  let dir = root;
  for (const segment of segments.slice(0, -1)) {
    dir = join(dir, segment);
    if ((await kindAt(dir)) !== "dir") return undefined;
  }
  return dir;
}

async function applyWhiteout(root: string, segments: readonly string[], name: string): Promise<void> {
  const base = segments.at(-1)!;
  const opaque = base === opaqueWhiteout;
  // `.wh.`, `.wh..` and `.wh...` would name the directory itself or its parent.
  const hidden = base.slice(whiteoutPrefix.length);
  if (!opaque && (hidden === "" || hidden === "." || hidden === ".."))
    throw unsafe(`the whiteout ${JSON.stringify(name)} names no entry`);
  const parent = await whiteoutParent(root, segments);
  if (parent === undefined) return;
  if (opaque) {
    for (const child of await readdir(parent)) await rm(join(parent, child), { recursive: true, force: true });
    return;
  }
  await rm(join(parent, hidden), { recursive: true, force: true });
}

async function writeEntry(
  root: string,
  entry: TarStreamEntry,
  segments: readonly string[],
  budget: UnpackBudget,
): Promise<void> {
  const path = await ensureParents(root, segments, entry.name, budget);
  const existing = await kindAt(path);
  if (entry.type === TarEntryType.Directory) {
    if (existing === "dir") return;
    if (existing !== "missing") await rm(path, { force: true });
    await mkdir(path);
    return;
  }
  if (existing !== "missing") await rm(path, { recursive: true, force: true });
  switch (entry.type) {
    case TarEntryType.File:
      // Ordinary permissions only: no setuid, no executables the reconciler never runs.
      await writeFile(path, entry.content, { flag: "wx", mode: 0o644 });
      return;
    case TarEntryType.Symlink:
      if (!linkStaysInside(segments, entry.linkname))
        throw unsafe(
          `the symlink ${JSON.stringify(entry.name)} points out of the image's directory (${entry.linkname})`,
        );
      await symlink(entry.linkname, path);
      return;
    case TarEntryType.Hardlink: {
      const target = join(root, ...safeSegments(entry.linkname));
      // Symlinks that are each inside lexically can still chain out (`a -> .`, `b -> a/..`): judge the real path.
      if (!(await realPathInside(root, target)))
        throw unsafe(
          `the hard link ${JSON.stringify(entry.name)} reaches outside the image's directory (${entry.linkname})`,
        );
      if ((await kindAt(target)) !== "other")
        throw unsafe(`the hard link ${JSON.stringify(entry.name)} names no file of the image (${entry.linkname})`);
      await hardLink(target, path, entry);
      return;
    }
    default:
      return;
  }
}

/**
 * A real link, not a copy: a copy would write the target's bytes again for every link, past the byte budget.
 * Sharing the file is safe since every write replaces its path (rm, then create), never writes into it.
 */
async function hardLink(target: string, path: string, entry: TarEntry): Promise<void> {
  try {
    await link(target, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EMLINK")
      throw unsafe(`the hard link ${JSON.stringify(entry.name)} is one too many to ${entry.linkname}`);
    throw error;
  }
}

/** How a layer's bytes are compressed, read from its first bytes as go-containerregistry peeks for Config Sync. */
function decompressorFor(blob: Buffer): { readonly name: string; readonly stream: Transform } | undefined {
  if (blob[0] === 0x1f && blob[1] === 0x8b) return { name: "gzip", stream: createGunzip() };
  if (blob.readUInt32LE(0) === zstdMagic) return { name: "zstd", stream: createZstdDecompress() };
  return undefined;
}
const zstdMagic = 0xfd2fb528;

/**
 * The layer's tar bytes as they decompress (gzip or zstd, whatever the media type says), refused once they
 * pass `maxBytes`: counted chunk by chunk, so a small layer that inflates to gigabytes is stopped at the bound
 * with only a chunk in memory.
 */
async function* tarBytes(blob: Buffer, maxBytes: number): AsyncGenerator<Buffer> {
  const decompressor = blob.length < 4 ? undefined : decompressorFor(blob);
  if (decompressor === undefined) {
    yield blob; // a plain tar is its compressed size, already bounded by the fetch
    return;
  }
  const { name, stream } = decompressor;
  stream.end(blob);
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw unsafe(`a layer unpacks to more than the ${maxBytes} bytes allowed`);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof OciFetchError) throw error;
    throw new OciFetchError(OciFailureReason.InvalidImage, `a layer is not valid ${name}: ${(error as Error).message}`);
  } finally {
    stream.destroy();
  }
}

async function eachEntry(
  blob: Buffer,
  maxBytes: number,
  visit: (entry: TarStreamEntry, segments: readonly string[]) => Promise<void>,
): Promise<void> {
  try {
    for await (const entry of readTar(tarBytes(blob, maxBytes))) await visit(entry, safeSegments(entry.name));
  } catch (error) {
    if (error instanceof TarFormatError)
      throw new OciFetchError(OciFailureReason.InvalidImage, `a layer is not a tar archive: ${error.message}`);
    throw error;
  }
}

const isWhiteout = (segments: readonly string[]): boolean => segments.at(-1)?.startsWith(whiteoutPrefix) === true;

/**
 * Unpacks one layer (tar, gzip- or zstd-compressed) over `root`, streaming. A first pass checks every path
 * and spends the budget for every entry before anything of the layer is written, and applies the whiteouts
 * (OCI applies them to the layers below only); a second pass, over the same bytes, writes the entries. The
 * directories a path implies are charged as the second pass makes them; a whiteout makes none.
 */
export async function unpackLayer(blob: Buffer, root: string, budget: UnpackBudget): Promise<void> {
  const maxBytes = Math.max(1024, budget.tarBytesLeft);
  await eachEntry(blob, maxBytes, async (entry, segments) => {
    if (segments.length === 0) return;
    budget.checkDepth(segments, entry.name);
    if (!isWhiteout(segments)) return budget.spend(entry, entry.name);
    budget.count();
    await applyWhiteout(root, segments, entry.name);
  });
  await eachEntry(blob, maxBytes, async (entry, segments) => {
    if (segments.length > 0 && !isWhiteout(segments)) await writeEntry(root, entry, segments, budget);
  });
}
