/**
 * Two manifests for one object would make every sync apply whichever came last, and flap. Config Sync
 * refuses the source (KNV1029); so does driftless, naming every file involved.
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

/** "a.yaml, b.yaml (2 times)": each file once, in reading order. */
function listPaths(objects: readonly Identified[]): string {
  const counts = new Map<string, number>();
  for (const { sourcePath } of objects) counts.set(sourcePath, (counts.get(sourcePath) ?? 0) + 1);
  return [...counts].map(([path, count]) => (count > 1 ? `${path} (${count} times)` : path)).join(", ");
}
