/** Builds tar archives in memory, including ones no honest tool writes (escaping paths, outward links). */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { constants, createGzip, gzipSync } from "node:zlib";

export interface TarInput {
  readonly name: string;
  /** A file's content; absent for directories and links. */
  readonly content?: string | Buffer;
  readonly type?: "file" | "directory" | "symlink" | "hardlink";
  readonly linkname?: string;
}

function field(header: Buffer, value: string, start: number, length: number): void {
  header.write(value, start, Math.min(Buffer.byteLength(value), length), "utf8");
}

function octalField(header: Buffer, value: number, start: number, length: number): void {
  field(header, `${value.toString(8).padStart(length - 1, "0")}\0`, start, length);
}

const flags = { file: "0", directory: "5", symlink: "2", hardlink: "1" } as const;

function entryBlocks(entry: TarInput): Buffer[] {
  const data = entry.content === undefined ? Buffer.alloc(0) : Buffer.from(entry.content);
  const blocks: Buffer[] = [];
  // Names over 100 bytes go in a pax header, as GNU tar and Go's archive/tar write them.
  if (Buffer.byteLength(entry.name) > 100) {
    const record = (len: number): string => `${len} path=${entry.name}\n`;
    let length = record(0).length;
    while (record(length).length !== length) length = record(length).length;
    blocks.push(
      ...entryBlocks({ name: "PaxHeader", content: record(length) }).map((b, i) => {
        if (i === 0) {
          b.write("x", 156);
          seal(b);
        }
        return b;
      }),
    );
  }
  blocks.push(headerBlock(entry, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  return blocks;
}

function headerBlock(entry: TarInput, size: number): Buffer {
  const header = Buffer.alloc(512);
  field(header, entry.name.slice(0, 100), 0, 100);
  octalField(header, entry.type === "directory" ? 0o755 : 0o644, 100, 8);
  octalField(header, 0, 108, 8);
  octalField(header, 0, 116, 8);
  octalField(header, size, 124, 12);
  octalField(header, 0, 136, 12);
  field(header, flags[entry.type ?? "file"], 156, 1);
  field(header, entry.linkname ?? "", 157, 100);
  field(header, "ustar\u000000", 257, 8);
  seal(header);
  return header;
}

function seal(header: Buffer): void {
  header.fill(32, 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  field(header, `${sum.toString(8).padStart(6, "0")}\0 `, 148, 8);
}

export function tarArchive(entries: readonly TarInput[]): Buffer {
  return Buffer.concat([...entries.flatMap(entryBlocks), Buffer.alloc(1024)]);
}

export function tarGz(entries: readonly TarInput[]): Buffer {
  return gzipSync(tarArchive(entries));
}

/**
 * A gzip bomb: `files` entries of `fileBytes` zeros each (`fileBytes` a multiple of 512), compressed as it is
 * generated, so gigabytes of tar cost the test a few hundred kilobytes of memory.
 */
export async function tarGzBomb(files: number, fileBytes: number): Promise<Buffer> {
  const zeros = Buffer.alloc(1024 * 1024);
  async function* tar(): AsyncGenerator<Buffer> {
    for (let i = 0; i < files; i++) {
      yield headerBlock({ name: `zeros-${i}.yaml` }, fileBytes);
      for (let left = fileBytes; left > 0; left -= zeros.length) yield zeros.subarray(0, Math.min(left, zeros.length));
    }
    yield Buffer.alloc(1024);
  }
  const parts: Buffer[] = [];
  const gzip = createGzip({ level: constants.Z_BEST_COMPRESSION });
  gzip.on("data", (chunk: Buffer) => parts.push(chunk));
  await pipeline(Readable.from(tar()), gzip);
  return Buffer.concat(parts);
}

/**
 * One entry exactly as given, for archives that read differently to a careless reader: any type flag, and a size
 * field that need not match the content that follows (`sizeField`, the 12 bytes' text; default the content's).
 */
export interface RawTarEntry {
  readonly name: string;
  readonly flag: string;
  readonly content: Buffer | string;
  readonly sizeField?: string;
}

export function rawTarBlocks(entry: RawTarEntry): Buffer {
  const data = Buffer.from(entry.content);
  const header = headerBlock({ name: entry.name }, data.length);
  header.fill(0, 156, 157);
  field(header, entry.flag, 156, 1);
  if (entry.sizeField !== undefined) {
    header.fill(0, 124, 136);
    header.write(entry.sizeField, 124, 12, "latin1");
  }
  seal(header);
  return Buffer.concat([header, data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
}

/** A pax extended header ("x") holding `records`, for the entry after it. */
export function paxHeaderBlocks(records: Readonly<Record<string, string>>): Buffer {
  const lines = Object.entries(records).map(([key, value]) => {
    const record = (len: number): string => `${len} ${key}=${value}\n`;
    let length = record(0).length;
    while (record(length).length !== length) length = record(length).length;
    return record(length);
  });
  return rawTarBlocks({ name: "PaxHeader", flag: "x", content: lines.join("") });
}

/** Blocks from rawTarBlocks and paxHeaderBlocks as a gzipped archive, with its end marker. */
export function rawTarGz(blocks: readonly Buffer[]): Buffer {
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}
