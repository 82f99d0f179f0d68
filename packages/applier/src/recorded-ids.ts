import type { KubeObject } from "@driftless/kube";
import type { ObjectId } from "./object-id.ts";

/** The ids a stored ResourceGroup's spec.resources lists, as written; a missing field reads as "". */
export function recordedIds(group: KubeObject): ObjectId[] {
  const raw = ((group["spec"] ?? {}) as { resources?: unknown }).resources;
  if (!Array.isArray(raw)) return [];
  const text = (value: unknown): string => (typeof value === "string" ? value : "");
  return (raw as Partial<Record<keyof ObjectId, unknown>>[]).map((entry) => ({
    group: text(entry.group),
    kind: text(entry.kind),
    namespace: text(entry.namespace),
    name: text(entry.name),
  }));
}

/**
 * A ResourceGroup spec recording `resources`: none is no field, as Config Sync's inventory converter
 * removes spec.resources when it has no objects (the field is omitempty), rather than `[]`.
 */
export function specWithResources(
  spec: Readonly<Record<string, unknown>>,
  resources: readonly ObjectId[],
): Record<string, unknown> {
  const { resources: _old, ...rest } = spec;
  return resources.length === 0 ? rest : { ...rest, resources };
}
