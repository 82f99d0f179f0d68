/**
 * How many objects a render output folder holds (Config Sync's kustomize_resource_count). kustomize
 * prints one object per YAML document, separated by `---` lines: counting documents with content is
 * exact for its output, without parsing up to 256 MiB a second time (the source step parses it).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

const separator = /^---[ \t]*(?:#.*)?$/gm;
/** A line that is neither blank nor a comment. */
const content = /^[ \t]*[^\s#]/m;

export async function countRenderedObjects(out: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir(out, { withFileTypes: true }))
    if (entry.isFile()) count += countDocuments(await readFile(join(out, entry.name), "utf8"));
  return count;
}

export function countDocuments(text: string): number {
  let count = 0;
  let from = 0;
  for (const marker of text.matchAll(separator)) {
    if (content.test(text.slice(from, marker.index))) count++;
    from = marker.index + marker[0].length;
  }
  return content.test(text.slice(from)) ? count + 1 : count;
}
