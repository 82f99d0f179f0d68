/**
 * The edge where untyped JSON from the API server becomes typed values. Checks are shallow on
 * purpose: objects are round-tripped as they are, so only the fields this package relies on are
 * verified. Each function answers undefined when the value does not have the expected shape, and
 * the caller decides what that means.
 */
import type { ApiStatus, KubeObject, ObjectMeta, StatusCause, StatusDetails } from "./types.ts";

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === "string" ? value : undefined;
}

/** Kind and apiVersion to fill in where the server leaves them out (items of a typed list). */
export interface TypeFill {
  readonly apiVersion: string;
  readonly kind: string;
}

/**
 * A freshly parsed object, typed. The value is modified in place (it is ours: it came from
 * JSON.parse) to fill in apiVersion/kind, which the server omits on list items.
 */
export function asKubeObject(
  value: unknown,
  fill?: TypeFill,
  options: { nameless?: boolean } = {},
): KubeObject | undefined {
  if (!isRecord(value)) return undefined;
  const metadata = value["metadata"];
  if (!isRecord(metadata)) return undefined;
  if (typeof metadata["name"] !== "string") {
    // Bookmarks carry only a resourceVersion; give them an empty name rather than a lie.
    if (options.nameless !== true) return undefined;
    metadata["name"] = "";
  }
  if (typeof value["apiVersion"] !== "string" || value["apiVersion"] === "") {
    if (fill === undefined) return undefined;
    value["apiVersion"] = fill.apiVersion;
  }
  if (typeof value["kind"] !== "string" || value["kind"] === "") {
    if (fill === undefined) return undefined;
    value["kind"] = fill.kind;
  }
  return value as KubeObject & { metadata: ObjectMeta };
}

/** A `Status` body, when the value is one (kind Status, or at least a code/reason/message). */
export function asApiStatus(value: unknown): ApiStatus | undefined {
  if (!isRecord(value)) return undefined;
  if (value["kind"] !== "Status" && value["code"] === undefined && value["reason"] === undefined) return undefined;
  const code = value["code"];
  const status: { -readonly [K in keyof ApiStatus]: ApiStatus[K] } = {};
  const s = stringField(value, "status");
  if (s !== undefined) status.status = s;
  const message = stringField(value, "message");
  if (message !== undefined) status.message = message;
  const reason = stringField(value, "reason");
  if (reason !== undefined) status.reason = reason;
  if (typeof code === "number") status.code = code;
  const details = asStatusDetails(value["details"]);
  if (details !== undefined) status.details = details;
  return status;
}

function asStatusDetails(value: unknown): StatusDetails | undefined {
  if (!isRecord(value)) return undefined;
  const details: { -readonly [K in keyof StatusDetails]: StatusDetails[K] } = {};
  for (const key of ["name", "group", "kind", "uid"] as const) {
    const field = stringField(value, key);
    if (field !== undefined) details[key] = field;
  }
  const retry = value["retryAfterSeconds"];
  if (typeof retry === "number") details.retryAfterSeconds = retry;
  const causes = value["causes"];
  if (Array.isArray(causes)) {
    details.causes = causes.filter(isRecord).map((c): StatusCause => {
      const cause: { -readonly [K in keyof StatusCause]: StatusCause[K] } = {};
      for (const key of ["reason", "message", "field"] as const) {
        const field = stringField(c, key);
        if (field !== undefined) cause[key] = field;
      }
      return cause;
    });
  }
  return details;
}

/** A list response: items typed (kind and apiVersion filled in), plus resourceVersion and continue. */
export function asListPage(
  value: unknown,
  fill: TypeFill,
): { items: KubeObject[]; resourceVersion: string; continueToken: string } | undefined {
  if (!isRecord(value)) return undefined;
  const metadata = value["metadata"];
  const rawItems = value["items"];
  if (!isRecord(metadata)) return undefined;
  // A list with no items may send `items: null`.
  if (rawItems !== null && rawItems !== undefined && !Array.isArray(rawItems)) return undefined;
  const items: KubeObject[] = [];
  for (const raw of rawItems ?? []) {
    const item = asKubeObject(raw, fill);
    if (item === undefined) return undefined;
    items.push(item);
  }
  return {
    items,
    resourceVersion: stringField(metadata, "resourceVersion") ?? "",
    continueToken: stringField(metadata, "continue") ?? "",
  };
}
