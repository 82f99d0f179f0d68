/**
 * Two manifests for one object would make every sync apply whichever came last, and flap. Config Sync
 * refuses the source (KNV1029); so does driftless, naming the files involved: the first
 * MAX_LISTED_PATHS in the message, every one in the error's resources.
 */
import { DuplicateObjectError } from "./errors.ts";
import { describeObject, objectKey } from "./object-id.ts";
import type { ObjectId } from "./object-id.ts";

interface Identified {
  readonly id: ObjectId;
  readonly sourcePath: string;
}

/** One error per duplicated id, in the order the first copy was read. */
export function findDuplicates(objects: readonly Identified[]): DuplicateObjectError[] {
  const byKey = new Map<string, Identified[]>();
  for (const object of objects) {
    const key = objectKey(object.id);
    const same = byKey.get(key);
    if (same) same.push(object);
    else byKey.set(key, [object]);
  }
  const errors: DuplicateObjectError[] = [];
  for (const same of byKey.values()) {
    const first = same[0];
    if (!first || same.length < 2) continue;
    const { id } = first;
    const group = id.group ? ` in group ${id.group}` : "";
    const message = `${describeObject(id)}${group} is declared ${same.length} times, in ${listPaths(same)}; keep exactly one`;
    const resources = same.map((o) => ({
      group: id.group,
      kind: id.kind,
      ...(id.namespace ? { namespace: id.namespace } : {}),
      name: id.name,
      sourcePath: o.sourcePath,
    }));
    errors.push(new DuplicateObjectError(message, { resources }));
  }
  return errors;
}

/**
 * How many files the message names. A source can declare one object in thousands of files, and the
 * message travels whole into logs and the queue (one such message was 6.5 MB); the first few say
 * what to fix, the resources list them all.
 */
export const MAX_LISTED_PATHS = 10;

/**
 * "a.yaml, b.yaml (2 times)": each file once, in reading order; past MAX_LISTED_PATHS files,
 * "a.yaml, ..., j.yaml and 5 more files".
 */
function listPaths(objects: readonly Identified[]): string {
  const counts = new Map<string, number>();
  for (const { sourcePath } of objects) counts.set(sourcePath, (counts.get(sourcePath) ?? 0) + 1);
  const listed = [...counts]
    .slice(0, MAX_LISTED_PATHS)
    .map(([path, count]) => (count > 1 ? `${path} (${count} times)` : path))
    .join(", ");
  const more = counts.size - MAX_LISTED_PATHS;
  return more > 0 ? `${listed} and ${more} more ${more === 1 ? "file" : "files"}` : listed;
}
