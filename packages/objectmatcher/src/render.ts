/**
 * A stable, readable rendering of a match result for logs and `driftless diff`: one line per changed
 * path with the live and declared values. Stable means the same inputs always render the same text
 * (map keys sorted, list items named by merge key). Secret values are never printed.
 */
import { ChangeOp, formatPath } from "./changes.ts";
import type { Change } from "./changes.ts";
import { canonicalJson, isObject, setOwn } from "./json.ts";
import type { JsonValue } from "./json.ts";

export interface RenderOptions {
  /** Longest value shown before it is cut (default 200 characters). */
  readonly maxValueLength?: number;
}

/** What rendering needs from a result (`PatchResult` has all of it). */
export interface Renderable {
  readonly changes: readonly Change[];
  readonly identity: {
    readonly apiVersion?: string;
    readonly kind?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
}

const SYMBOL: Readonly<Record<ChangeOp, string>> = { add: "+", change: "~", remove: "-", record: "!" };
const REDACTED = "<redacted>";

export function renderResult(result: Renderable, options: RenderOptions = {}): string {
  const { apiVersion, kind, namespace, name } = result.identity;
  const title = [apiVersion, kind, name === undefined ? undefined : namespace ? `${namespace}/${name}` : name]
    .filter((part) => part !== undefined && part !== "")
    .join(" ");
  const count = result.changes.length;
  const header = `${title || "object"}: ${count === 0 ? "no changes" : count === 1 ? "1 change" : `${count} changes`}`;
  const secret = kind === "Secret" && (apiVersion === "v1" || apiVersion === undefined);
  const lines = result.changes.map((change) => `  ${renderChange(change, secret, options.maxValueLength ?? 200)}`);
  return [header, ...lines].join("\n");
}

function renderChange(change: Change, secret: boolean, max: number): string {
  const path = formatPath(change.path);
  const redact = secret && (change.path[0] === "data" || change.path[0] === "stringData");
  const show = (value: JsonValue | undefined): string =>
    value === undefined ? "(absent)" : formatValue(redact ? redactValue(value) : value, max);
  switch (change.op) {
    case ChangeOp.Add:
      return `${SYMBOL.add} ${path}: ${show(change.after)}`;
    case ChangeOp.Change:
      return `${SYMBOL.change} ${path}: ${show(change.before)} -> ${show(change.after)}`;
    case ChangeOp.Remove:
      return `${SYMBOL.remove} ${path}: ${show(change.before)}`;
    case ChangeOp.Record:
      return `${SYMBOL.record} ${path}: the last-applied record cannot be read; an update rewrites it`;
  }
}

function formatValue(value: JsonValue, max: number): string {
  const text = canonicalJson(value);
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length - max} more characters)`;
}

/** A copy of a Secret-shaped object with every `data`/`stringData` value replaced, for logs. */
export function redactSecretValues(value: JsonValue): JsonValue {
  if (!isObject(value)) return value;
  const out: Record<string, JsonValue> = { ...value };
  for (const field of ["data", "stringData"]) {
    const data = out[field];
    if (data !== undefined) out[field] = redactValue(data);
  }
  return out;
}

function redactValue(value: JsonValue): JsonValue {
  if (!isObject(value)) return REDACTED;
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(value)) setOwn(out, key, REDACTED);
  return out;
}
