/**
 * A reader of tar archives held in memory (ustar, pax and GNU long names): the entries an image layer
 * holds, before anything is written. Refuses what is not a tar rather than guessing.
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
  readonly data: Buffer;
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
  const digits = text(buf, start, length).trim();
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

export function* readTar(archive: Buffer): Generator<TarEntry> {
  let at = 0;
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax = new Map<string, string>();
  while (at + block <= archive.length) {
    const header = archive.subarray(at, at + block);
    if (header.every((b) => b === 0)) return; // end-of-archive marker
    if (!checksumMatches(header)) throw new TarFormatError("not a tar archive (header checksum mismatch)");
    const size = octal(header, 124, 12);
    const flag = text(header, 156, 1);
    const dataStart = at + block;
    if (dataStart + size > archive.length) throw new TarFormatError("the tar archive is truncated");
    const data = archive.subarray(dataStart, dataStart + size);
    at = dataStart + Math.ceil(size / block) * block;
    if (flag === "x") {
      pax = paxRecords(data);
      continue;
    }
    if (flag === "g") continue; // global pax header: nothing driftless reads
    if (flag === "L" || flag === "K") {
      const value = text(data, 0, data.length);
      if (flag === "L") longName = value;
      else longLink = value;
      continue;
    }
    const prefix = text(header, 257, 6).startsWith("ustar") ? text(header, 345, 155) : "";
    const short = text(header, 0, 100);
    const name = pax.get("path") ?? longName ?? (prefix === "" ? short : `${prefix}/${short}`);
    const linkname = pax.get("linkpath") ?? longLink ?? text(header, 157, 100);
    yield { name, type: typeOf(flag), linkname, data };
    longName = undefined;
    longLink = undefined;
    pax = new Map();
  }
}
