/**
 * What the three-way match found: one entry per path where the live object must change to match the
 * declaration. Paths name list items by merge key, not by position, because positions in live lists
 * shift whenever someone else (admission, a mesh injector) adds an item.
 */
import type { JsonScalar, JsonValue } from "./json.ts";

export const ChangeOp = {
  /** Declared, but the live object does not have it. */
  Add: "add",
  /** Declared, and the live object has something else. */
  Change: "change",
  /** Was declared last time, is no longer, and the live object still has it. */
  Remove: "remove",
  /** Our last-applied record on the live object cannot be read; an update rewrites it. */
  Record: "record",
} as const;
export type ChangeOp = (typeof ChangeOp)[keyof typeof ChangeOp];

/** A field name, a keyed list item (by its merge key values), or a member of a set-like list. */
export type PathSegment =
  string | { readonly key: Readonly<Record<string, JsonScalar>> } | { readonly member: JsonScalar };

export interface Change {
  readonly op: ChangeOp;
  readonly path: readonly PathSegment[];
  /** The live value (absent for `add`). */
  readonly before?: JsonValue;
  /** The declared value (absent for `remove`). */
  readonly after?: JsonValue;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `spec.template.spec.containers[name="app"].image`, `metadata.labels["app.kubernetes.io/name"]`. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "string") {
      out += IDENTIFIER.test(segment) ? (out === "" ? segment : `.${segment}`) : `[${JSON.stringify(segment)}]`;
    } else if ("key" in segment) {
      const parts = Object.entries(segment.key).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
      out += `[${parts.join(",")}]`;
    } else {
      out += `[=${JSON.stringify(segment.member)}]`;
    }
  }
  return out === "" ? "." : out;
}
