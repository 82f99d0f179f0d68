/**
 * The `config.kubernetes.io/depends-on` annotation, parsed with the rules of cli-utils (which Config Sync
 * uses to apply): comma-separated references, each `group/Kind/name` (cluster-scoped) or
 * `group/namespaces/namespace/Kind/name`, where group is "" for the core group. Config Sync only notices
 * a malformed value when it applies; reading it here reports it against the file instead.
 */
import type { ObjectId } from "./object-id.ts";

export type DependsOnParse =
  { readonly ok: true; readonly refs: readonly ObjectId[] } | { readonly ok: false; readonly problem: string };

export function parseDependsOn(value: string): DependsOnParse {
  const refs: ObjectId[] = [];
  for (const part of value.split(",")) {
    const ref = parseObjectRef(part.trim());
    if (typeof ref === "string") return { ok: false, problem: ref };
    refs.push(ref);
  }
  return { ok: true, refs };
}

/** Parses one reference; returns a problem description when it is malformed. */
export function parseObjectRef(text: string): ObjectId | string {
  const fields = text.split("/");
  let id: ObjectId;
  if (fields.length === 3) {
    const [group = "", kind = "", name = ""] = fields;
    id = { group, kind, namespace: "", name };
  } else if (fields.length === 5) {
    const [group = "", namespaces, namespace = "", kind = "", name = ""] = fields;
    if (namespaces !== "namespaces") {
      return `reference "${text}" has 5 fields, so the second must be "namespaces" (group/namespaces/namespace/Kind/name)`;
    }
    if (namespace === "") return `reference "${text}" has an empty namespace`;
    id = { group, kind, namespace, name };
  } else {
    return `reference "${text}" must be group/Kind/name (cluster-scoped) or group/namespaces/namespace/Kind/name; use an empty group for the core group, e.g. "/namespaces/default/ConfigMap/app"`;
  }
  if (id.kind === "") return `reference "${text}" has an empty kind`;
  if (id.name === "") return `reference "${text}" has an empty name`;
  return id;
}
