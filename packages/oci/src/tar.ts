/**
 * A streaming reader of tar archives (ustar, pax and GNU long names): the entries an image layer holds.
 * Refuses what is not a tar rather than guessing.
 */

export const TarEntryType = {
  File: "file",
  Directory: "directory",
  Symlink: "symlink",
  Hardlink: "hardlink",
  /** Devices, FIFOs and the like: nothing a configuration needs. */
  Other: "other",
} as const;
export type TarEntryType = (typeof TarEntryType)[keyof typeof TarEntryType];

export interface TarEntry {
  readonly name: string;
  readonly type: TarEntryType;
  readonly linkname: string;
  /** Bytes of content, as the header declares them. */
  readonly size: number;
}

export class TarFormatError extends Error {}

const block = 512;

function text(buf: Buffer, start: number, length: number): string {
  const field = buf.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? field.length : end).toString("utf8");
}

function octal(buf: Buffer, start: number, length: number): number {
  const field = buf.subarray(start, start + length);
  // GNU base-256 for sizes beyond 8 GiB: the high bit of the first byte is set.
  if ((field[0]! & 0x80) !== 0) {
    let value = field[0]! & 0x7f;
    for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
    return value;
  }
  // As Go's archive/tar (containerd's and helm's reader) parses it: spaces and NULs trimmed from both ends, then
  // up to the first NUL. Read any other way, a crafted size would put the two readers at different entries.
  const trimmed = field.toString("latin1").replace(/^[ \0]+|[ \0]+$/g, "");
  const nul = trimmed.indexOf("\0");
  const digits = nul < 0 ? trimmed : trimmed.slice(0, nul);
  if (digits === "") return 0;
  if (!/^[0-7]+$/.test(digits)) throw new TarFormatError(`not a tar archive (bad number "${digits}")`);
  return parseInt(digits, 8);
}

function checksumMatches(header: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < block; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
  return sum === octal(header, 148, 8);
}

/** pax extended header records: `<length> <key>=<value>\n`. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const length = parseInt(data.subarray(at, space).toString("ascii"), 10);
    if (!Number.isInteger(length) || length <= 0) throw new TarFormatError("not a tar archive (bad pax record)");
    const record = data.subarray(space + 1, at + length - 1).toString("utf8");
    const eq = record.indexOf("=");
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

/** Types whose header's size Go's archive/tar ignores: they carry no content, whatever the header says. */
const headerOnlyFlags = new Set(["1", "2", "3", "4", "5", "6"]);

function typeOf(flag: string): TarEntryType {
  switch (flag) {
    case "0":
    case "":
    case "7":
      return TarEntryType.File;
    case "5":
      return TarEntryType.Directory;
    case "2":
      return TarEntryType.Symlink;
    case "1":
      return TarEntryType.Hardlink;
    default:
      return TarEntryType.Other;
  }
}

function paxSize(value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new TarFormatError(`not a tar archive (bad pax size "${value}")`);
  return Number(value);
}

/**
 * The name prefix, read only where Go's archive/tar reads one: a POSIX ustar header (magic "ustar\0"; star's
 * shorter prefix when its trailer is there). A GNU header ("ustar ") keeps times in those bytes, not a name.
 */
function ustarPrefix(header: Buffer): string {
  if (header.toString("latin1", 257, 263) !== "ustar\0") return "";
  const star = header.toString("latin1", 508, 512) === "tar\0";
  return text(header, 345, star ? 131 : 155);
}

/** Reads exact byte counts from a stream of chunks without gathering more than asked. */
class ChunkReader {
  readonly #source: AsyncIterator<Buffer>;
  #pending: Buffer = Buffer.alloc(0);

  constructor(source: AsyncIterable<Buffer>) {
    this.#source = source[Symbol.asyncIterator]();
  }

  /** Up to `max` bytes of what is available (reading one more chunk if none is); undefined at the end. */
  async next(max: number): Promise<Buffer | undefined> {
    if (this.#pending.length === 0) {
      const next = await this.#source.next();
      if (next.done === true) return undefined;
      this.#pending = next.value;
    }
    const out = this.#pending.subarray(0, max);
    this.#pending = this.#pending.subarray(out.length);
    return out;
  }

  /** Exactly `length` bytes, fewer only at the end of the stream. */
  async read(length: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    let got = 0;
    while (got < length) {
      const part = await this.next(length - got);
      if (part === undefined) break;
      parts.push(part);
      got += part.length;
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** Passes over `length` bytes; returns how many there were. */
  async skip(length: number): Promise<number> {
    let left = length;
    while (left > 0) {
      const part = await this.next(left);
      if (part === undefined) break;
      left -= part.length;
    }
    return length - left;
  }

  async close(): Promise<void> {
    await this.#source.return?.();
  }
}

/** An entry and its content; content not read before the next entry is asked for is passed over. */
export interface TarStreamEntry extends TarEntry {
  readonly content: AsyncIterable<Buffer>;
}

/** Largest pax or GNU long-name header held in memory: names and links, never file content. */
const maxHeaderDataBytes = 1024 * 1024;

/**
 * Reads a tar archive as it streams in: one header at a time, file content passed on in the chunks it came
 * in, so no more than a header is held (a layer that decompresses to gigabytes never sits in memory).
 */
export async function* readTar(source: AsyncIterable<Buffer>): AsyncGenerator<TarStreamEntry> {
  const reader = new ChunkReader(source);
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax = new Map<string, string>();
  try {
    for (;;) {
      const header = await reader.read(block);
      if (header.length === 0) return;
      // Go's archive/tar (Config Sync's oci-sync, helm) fails on a header cut short: a small file that is no tar
      // (a YAML file pushed as a layer) was read as an empty layer, an empty source that pruned everything.
      if (header.length < block)
        throw new TarFormatError(`not a tar archive (${header.length} bytes where a 512-byte header was due)`);
      if (header.every((b) => b === 0)) return; // end-of-archive marker
      if (!checksumMatches(header)) throw new TarFormatError("not a tar archive (header checksum mismatch)");
      const rawFlag = text(header, 156, 1);
      const meta = rawFlag === "x" || rawFlag === "g" || rawFlag === "L" || rawFlag === "K";
      if (meta) {
        const size = octal(header, 124, 12);
        if (size > maxHeaderDataBytes)
          throw new TarFormatError(`a tar extended header of ${size} bytes is larger than ${maxHeaderDataBytes}`);
        const data = await reader.read(size);
        if (data.length < size) throw new TarFormatError("the tar archive is truncated");
        await reader.skip(Math.ceil(size / block) * block - size);
        if (rawFlag === "x") pax = paxRecords(data);
        else if (rawFlag === "L") longName = text(data, 0, data.length);
        else if (rawFlag === "K") longLink = text(data, 0, data.length);
        continue; // a global pax header ("g") holds nothing driftless reads
      }
      // Names as Go's archive/tar gives them (containerd's and helm's reader): a GNU long name or link wins over
      // the pax one, and an old-style entry (type NUL) named with a trailing slash is a directory.
      const prefix = ustarPrefix(header);
      const short = text(header, 0, 100);
      const name = longName ?? pax.get("path") ?? (prefix === "" ? short : `${prefix}/${short}`);
      const linkname = longLink ?? pax.get("linkpath") ?? text(header, 157, 100);
      const flag = rawFlag === "" && name.endsWith("/") ? "5" : rawFlag;
      // The pax size wins over the ustar field, as in Go; a link, device or directory has no content.
      const paxDeclared = pax.get("size");
      const declaredSize = paxDeclared !== undefined ? paxSize(paxDeclared) : octal(header, 124, 12);
      const size = headerOnlyFlags.has(flag) ? 0 : declaredSize;
      const padding = Math.ceil(size / block) * block - size;
      let left = size;
      const content = async function* (): AsyncGenerator<Buffer> {
        while (left > 0) {
          const chunk = await reader.next(left);
          if (chunk === undefined) throw new TarFormatError("the tar archive is truncated");
          left -= chunk.length;
          yield chunk;
        }
      };
      yield { name, type: typeOf(flag), linkname, size, content: content() };
      if ((await reader.skip(left)) < left) throw new TarFormatError("the tar archive is truncated");
      await reader.skip(padding);
      longName = undefined;
      longLink = undefined;
      pax = new Map();
    }
  } finally {
    await reader.close();
  }
}
