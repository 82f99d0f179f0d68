/**
 * helm validates a chart's values against its values.schema.json (and each subchart's), and its JSON
 * Schema compiler loads every `$ref` or `$schema` it does not find in the document itself: from
 * `file://` (the document's base is file:///values.schema.json, so `etc/x` is /etc/x) or `http(s)://`,
 * and prints what it loaded in its errors ("value must be '<loaded text>'"). A chart in the repository
 * may therefore refer only inside its own schemas (`#…`) and name a standard draft; anything else would
 * read a file of the reconciler or fetch a URL, which only shell access allows.
 */
import { createGunzip } from "node:zlib";
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { join, posix } from "node:path";
import { readTar, TarEntryType } from "@driftless/oci";
import { RenderingError } from "./render-error.ts";

/** helm's own bounds on a chart archive (MaxDecompressedChartSize) and one file in it (MaxDecompressedFileSize). */
const maxChartBytes = 100 * 1024 * 1024;
const maxFileBytes = 5 * 1024 * 1024;
/** Subchart archives inside subchart archives, at most this deep. */
const maxArchiveDepth = 8;
/**
 * All archives of one check together: each is bounded alone, but an archive may hold many archives that
 * each decompress to the bound, so without a total the work would grow with every level of nesting.
 */
const maxCheckBytes = 256 * 1024 * 1024;

const schemaFile = "values.schema.json";
const referenceKeys = ["$ref", "$dynamicRef", "$recursiveRef"];
/** The drafts helm's compiler knows without loading anything (`…/schema` is its latest: Bitnami's charts name it). */
const standardDraft =
  /^https?:\/\/json-schema\.org\/(schema|draft-0[4-7]\/schema|draft\/2019-09\/schema|draft\/2020-12\/schema)#?$/;

/** The first reference of `schema` that helm would load from outside the document, described; undefined when none. */
export function externalSchemaReference(schema: unknown): string | undefined {
  const pending: unknown[] = [schema];
  for (let node = pending.pop(); node !== undefined || pending.length > 0; node = pending.pop()) {
    if (typeof node !== "object" || node === null) continue;
    // Pushed one by one: spread into push's arguments, an array of ~120,000 items overflows the stack.
    if (Array.isArray(node)) {
      for (const item of node as unknown[]) pending.push(item);
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const key of referenceKeys) {
      const value = record[key];
      if (typeof value === "string" && !value.startsWith("#")) return `${key} ${JSON.stringify(value)}`;
    }
    const draft = record["$schema"];
    if (typeof draft === "string" && !standardDraft.test(draft)) return `$schema ${JSON.stringify(draft)}`;
    for (const item of Object.values(record)) pending.push(item);
  }
  return undefined;
}

/**
 * Checks every values.schema.json below the real chart directory `dir`, inside subchart archives
 * (`.tgz`) too; `show` names a path for messages.
 */
export async function checkChartSchemas(dir: string, where: string, show: (path: string) => string): Promise<void> {
  const seen = new Set<string>();
  const decompressed = { bytes: 0 };
  const walk = async (path: string): Promise<void> => {
    const real = await realpath(path);
    if (seen.has(real)) return;
    seen.add(real);
    for (const entry of await readdir(real, { withFileTypes: true })) {
      const child = join(real, entry.name);
      // Symlinks were proven to stay in the repository (checkTreeBelow); helm follows them.
      const isDir = entry.isDirectory() || (entry.isSymbolicLink() && (await stat(child)).isDirectory());
      if (isDir) await walk(child);
      else if (entry.name === schemaFile) check(await readFile(child), show(child));
      else if (entry.name.endsWith(".tgz")) await checkArchive(await readFile(child), show(child), 1);
    }
  };
  const check = (bytes: Buffer, file: string): void => {
    let schema: unknown;
    try {
      schema = JSON.parse(bytes.toString("utf8"));
    } catch (error) {
      // helm would refuse it too; refused here so that no JSON this check reads otherwise goes unchecked.
      throw new RenderingError(`${where}: ${file} is not valid JSON: ${(error as Error).message}`, error);
    }
    const found = externalSchemaReference(schema);
    if (found !== undefined)
      throw new RenderingError(
        `${where}: ${file} refers to ${found}, which helm would load from outside the chart (a file of the reconciler or a URL) and show in its errors; a chart's schemas may refer only inside themselves (#…) without spec.override.enableShellInRendering: true`,
      );
  };
  const checkArchive = async (archive: Buffer, file: string, depth: number): Promise<void> => {
    if (depth > maxArchiveDepth)
      throw new RenderingError(`${where}: ${file} nests subchart archives more than ${maxArchiveDepth} deep`);
    try {
      for await (const entry of readTar(gunzipped(archive, decompressed))) {
        // Every entry with content, whatever its type: Go's tar reader gives helm the content of unknown types too.
        const withContent = entry.type === TarEntryType.File || entry.type === TarEntryType.Other;
        if (!withContent || entry.size > maxFileBytes) continue;
        const name = helmFileName(entry.name).split("/").at(-1) ?? "";
        if (name !== schemaFile && !name.endsWith(".tgz")) continue;
        const chunks: Buffer[] = [];
        for await (const chunk of entry.content) chunks.push(chunk);
        const bytes = Buffer.concat(chunks);
        if (name === schemaFile) check(bytes, `${file}:${entry.name}`);
        else await checkArchive(bytes, `${file}:${entry.name}`, depth + 1);
      }
    } catch (error) {
      if (error instanceof RenderingError) throw error;
      // An archive this cannot read is not loaded unchecked: helm reads gzip and tar alike.
      throw new RenderingError(
        `${where}: ${file} cannot be read as a chart archive to check its schemas: ${(error as Error).message}`,
        error,
      );
    }
  };
  await walk(dir);
}

/**
 * The name helm's archive loader gives an entry: split on "\\" where the name holds one (an archive made on
 * Windows), else on "/", the first part (the chart's folder) dropped, then cleaned, so `c\\values.schema.json`,
 * `c/values.schema.json/` and `c/values.schema.json/.` are all the chart's schema to helm.
 */
function helmFileName(entryName: string): string {
  const delimiter = entryName.includes("\\") ? "\\" : "/";
  const cleaned = posix.normalize(entryName.split(delimiter).slice(1).join("/"));
  return cleaned === "/" ? cleaned : cleaned.replace(/\/+$/, "");
}

/**
 * The archive's bytes as they decompress, refused past helm's own bound on a chart, or once the check's
 * archives together (`decompressed`, shared by every archive of one check) pass theirs.
 */
async function* gunzipped(archive: Buffer, decompressed: { bytes: number }): AsyncGenerator<Buffer> {
  const gunzip = createGunzip();
  gunzip.end(archive);
  let total = 0;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      total += chunk.length;
      decompressed.bytes += chunk.length;
      if (total > maxChartBytes) throw new Error(`it decompresses to more than ${maxChartBytes} bytes`);
      if (decompressed.bytes > maxCheckBytes)
        throw new Error(`the chart's archives together decompress to more than ${maxCheckBytes} bytes`);
      yield chunk;
    }
  } finally {
    gunzip.destroy();
  }
}
