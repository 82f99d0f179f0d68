/**
 * The three-way match: does the live object need an update to match what Git declares?
 *
 * Design decisions:
 *
 * - **Inputs.** `original` is what we applied last time, kept on the object in our own annotation
 *   (`LAST_APPLIED_ANNOTATION` = `driftless.dev/last-applied-configuration`; never kubectl's
 *   `kubectl.kubernetes.io/last-applied-configuration`, so `kubectl apply` and driftless never read
 *   each other's records). The record never contains the annotation itself; Secret values and long
 *   string values are recorded as digests (a recorded value is only read as "this was declared", never
 *   compared, so a record with full values, as written before, reads the same); it is compressed to fit
 *   the API server's 256 KiB annotation budget, or refused with `LastAppliedTooLargeError`
 *   (`last-applied.ts`). `modified` is the declaration; `current` the live object with the server's
 *   defaults and other actors' additions. An unreadable record counts as a reason to update (the
 *   update rewrites it), never as an error that stops the reconcile.
 * - **The rule, per path.** A declared value that differs live → update (drift, or a changed
 *   declaration). A path in `original`, gone from `modified`, still live → update (a deletion). A live
 *   path neither declared nor in `original` → ignored: it belongs to the server or to someone else.
 *   Removing a declared map removes only the keys we declared in it, so other actors' labels survive; a
 *   custom resource's map that holds nothing else goes whole (it would stay as `{}`).
 * - **Lists.** Built-in kinds follow the strategic-merge tags of their Go types (`facts.ts`, generated
 *   from Kubernetes' own types): keyed lists match items by merge key, ignore undeclared live
 *   items and ignore order; set-like lists (finalizers) ignore undeclared members; every other list
 *   is atomic and compares whole. Ordering alone is never a change, so the `$setElementOrder` false
 *   positive of kubectl's three-way patch cannot happen. Custom resources follow their CRD's schema
 *   when the caller hands it over (`x-kubernetes-list-type` map/set, `openapi.ts`), JSON merge
 *   semantics otherwise with every list atomic; their `metadata`, typed ObjectMeta on every kind,
 *   keeps keyed owner references and set-like finalizers either way.
 * - **What the server re-spells is not a change.** Normalisation (`normalize.ts`) removes what the
 *   server omits or owns (null, a built-in kind's empty values, server metadata, status, Secret
 *   `stringData` → `data`; a custom resource keeps `""` and `[]`, stored as sent).
 *   For built-in kinds comparison then allows: quantities by value (`quantity.ts`), int-or-string
 *   `80` = `"80"`, canonical base64, a declared `false`/`0` satisfied by its omission only in a
 *   non-pointer Go field (a pointer field such as `allowPrivilegeEscalation` keeps an explicit `false`),
 *   and inside atomic lists what defaulting and admission add when it was not declared
 *   (`serverFilled`, `admissionItems`: a Pod's default not-ready/unreachable tolerations, a
 *   StatefulSet's volumeClaimTemplates type meta, volumeMode and status, RBAC subject apiGroups).
 * - **Output.** A sorted list of changes whose paths name list items by merge key. `patch.ts` turns it
 *   into the patch: a strategic merge patch for built-in kinds (`$patch: delete`, null,
 *   `$deleteFromPrimitiveList`, `$retainKeys`), an RFC 7386 merge patch for the rest. Applied to
 *   `current` (`applyPatch`), it yields an object that matches `modified`; property tests hold us to
 *   that. `isEmpty()` is what the reconciler acts on; it may well send a full update instead.
 * - **Errors** are typed, with a KNV `code`: `LastAppliedTooLargeError` (terminal),
 *   `LastAppliedUnreadableError`, `InvalidObjectError` (`errors.ts`).
 * - **Cost.** The walk is driven by the declaration and the original, which are small; the live object
 *   is only read where something is declared, and never copied unless a change is recorded.
 */
import { ChangeOp, formatPath } from "./changes.ts";
import type { Change, PathSegment } from "./changes.ts";
import { atomicEqual, isSchemaDefault, satisfiedByAbsence, scalarEqual } from "./equality.ts";
import { cloneJson, compareStrings, deepEqual, isObject, own } from "./json.ts";
import type { JsonArray, JsonObject, JsonValue } from "./json.ts";
import type { KindInfo } from "./kinds.ts";
import { isAbsent } from "./normalize.ts";
import { childSchema, hasDuplicateKeys, hasPrimaryKey, itemKey, itemKeyFields, namedField, sameKey } from "./schema.ts";
import type { FieldSchema } from "./schema.ts";

export interface ThreeWayInput {
  /** Normalised last-applied record, if the object has one. */
  readonly original: JsonObject | undefined;
  /** Normalised declaration. */
  readonly modified: JsonObject;
  /** The live object as the API server returned it (read, never modified). */
  readonly current: JsonObject;
  readonly kind: KindInfo;
}

interface Walk {
  readonly builtIn: boolean;
  readonly path: PathSegment[];
  readonly changes: Change[];
}

/** Type meta names the object (and its served version); it is never a change to send. */
const IDENTITY_FIELDS = new Set(["apiVersion", "kind"]);

export function threeWay(input: ThreeWayInput): Change[] {
  const walk: Walk = { builtIn: input.kind.builtIn, path: [], changes: [] };
  compareMap(input.original, input.modified, input.current, input.kind.schema, walk, true);
  return sortChanges(walk.changes);
}

/** Changes in path order, whatever the key order of the inputs: the rendering must be stable. */
function sortChanges(changes: Change[]): Change[] {
  if (changes.length < 2) return changes;
  return changes
    .map((change) => ({ change, path: formatPath(change.path) }))
    .sort((a, b) => compareStrings(a.path, b.path))
    .map(({ change }) => change);
}

/** Is a live value "not set"? A custom resource's `""` and `[]` are set: it is stored as sent. */
function absent(value: unknown, schema: FieldSchema | undefined, walk: Walk): boolean {
  return isAbsent(value, schema, !walk.builtIn);
}

function record(walk: Walk, op: ChangeOp, before: unknown, after: JsonValue | undefined): void {
  const change: { op: ChangeOp; path: PathSegment[]; before?: JsonValue; after?: JsonValue } = {
    op,
    path: walk.path.slice(),
  };
  const live = before === undefined ? undefined : cloneJson(before);
  if (live !== undefined) change.before = live;
  if (after !== undefined) change.after = after;
  walk.changes.push(change);
}

function compareValue(
  o: JsonValue | undefined,
  m: JsonValue,
  c: unknown,
  schema: FieldSchema | undefined,
  walk: Walk,
): void {
  if (isObject(m)) {
    if (isObject(c) && schema?.atomicMap) {
      if (!atomicEqual(m, c, schema, walk.builtIn)) record(walk, ChangeOp.Change, c, m);
    } else if (isObject(c)) compareMap(isObject(o) ? o : undefined, m, c, schema, walk, false);
    else if (!absent(c, schema, walk)) record(walk, ChangeOp.Change, c, m);
    else if (!satisfiedByAbsence(m, schema, walk.builtIn)) record(walk, ChangeOp.Add, undefined, m);
    return;
  }
  if (Array.isArray(m)) {
    compareList(Array.isArray(o) ? o : undefined, m, c, schema, walk);
    return;
  }
  if (absent(c, schema, walk)) {
    if (!satisfiedByAbsence(m, schema, walk.builtIn)) record(walk, ChangeOp.Add, undefined, m);
  } else if (!scalarEqual(m, c, schema, walk.builtIn)) {
    record(walk, ChangeOp.Change, c, m);
  }
}

function compareMap(
  o: JsonObject | undefined,
  m: JsonObject,
  c: JsonObject,
  schema: FieldSchema | undefined,
  walk: Walk,
  root: boolean,
): void {
  const prunes = schema?.prunesUnknown === true;
  // Own keys only, on every side: a key may be named `toString` or `__proto__` (json.ts, own).
  for (const key of Object.keys(m)) {
    if (root && IDENTITY_FIELDS.has(key)) continue;
    const value = m[key];
    if (value === undefined) continue;
    // A field the schema does not know is dropped by the API server: it can never be live.
    if (prunes && namedField(schema, key) === undefined) continue;
    walk.path.push(key);
    compareValue(o && own(o, key), value, own(c, key), childSchema(schema, key), walk);
    walk.path.pop();
  }
  if (schema?.oneOf) removeOtherMembers(o, m, c, schema, walk);
  if (!o) return;
  for (const key of Object.keys(o)) {
    if ((root && IDENTITY_FIELDS.has(key)) || own(m, key) !== undefined) continue;
    const was = o[key];
    if (was === undefined) continue;
    walk.path.push(key);
    const fieldSchema = childSchema(schema, key);
    const live = own(c, key);
    // A one-of member (a volume's source, a probe's handler) we no longer declare goes whole, not key by key.
    if (schema?.retainKeys || fieldSchema?.oneOfMember) {
      if (!absent(live, fieldSchema, walk)) record(walk, ChangeOp.Remove, live, undefined);
    } else compareRemoved(was, live, fieldSchema, walk);
    walk.path.pop();
  }
}

/**
 * A one-of holds one member: once we declare one, a live member we never declared (an adopted object's
 * `httpGet` where Git says `tcpSocket`) must go, or the API server refuses the update. Members `o`
 * recorded are removed by the caller.
 */
function removeOtherMembers(
  o: JsonObject | undefined,
  m: JsonObject,
  c: JsonObject,
  schema: FieldSchema,
  walk: Walk,
): void {
  if (!Object.keys(m).some((key) => namedField(schema, key)?.oneOfMember)) return;
  for (const key of Object.keys(c)) {
    const fieldSchema = namedField(schema, key);
    if (!fieldSchema?.oneOfMember || own(m, key) !== undefined || (o && own(o, key) !== undefined)) continue;
    const live = own(c, key);
    if (absent(live, fieldSchema, walk)) continue;
    walk.path.push(key);
    record(walk, ChangeOp.Remove, live, undefined);
    walk.path.pop();
  }
}

/** `o` was declared and no longer is. Only what we declared goes: a map or keyed list is emptied of our entries. */
function compareRemoved(o: JsonValue, c: unknown, schema: FieldSchema | undefined, walk: Walk): void {
  // A schema default is what the server would fill in again: removing it changes nothing.
  if (absent(c, schema, walk) || isSchemaDefault(c, schema, walk.builtIn)) return;
  if (isObject(o) && isObject(c)) {
    // A custom resource stores `{}` as sent: a map holding only what we recorded goes whole, as a server-side
    // apply (Config Sync's) or kubectl's three-way patch removes it; emptied key by key it stayed as `{}`.
    if (!walk.builtIn && holdsOnlyRecorded(o, c)) record(walk, ChangeOp.Remove, c, undefined);
    else compareMap(o, {}, c, schema, walk, false);
  } else if (Array.isArray(o) && Array.isArray(c) && schema?.list) compareList(o, [], c, schema, walk);
  else record(walk, ChangeOp.Remove, c, undefined);
}

/** Every live key was recorded by us, nested maps alike, and a list is ours only as we recorded it. */
function holdsOnlyRecorded(o: JsonObject, c: JsonObject): boolean {
  return Object.keys(c).every((key) => {
    const was = own(o, key);
    const live = own(c, key);
    if (was === undefined) return live === undefined;
    if (isObject(live)) return isObject(was) && holdsOnlyRecorded(was, live);
    return !Array.isArray(live) || deepEqual(was, live);
  });
}

function compareList(
  o: JsonArray | undefined,
  m: JsonArray,
  c: unknown,
  schema: FieldSchema | undefined,
  walk: Walk,
): void {
  if (schema?.list && Array.isArray(c)) {
    if (schema.list === "map" && schema.keys) {
      if (compareKeyed(o, m, c, schema, walk)) return;
    } else if (schema.list === "set") {
      compareSet(o, m, c, walk);
      return;
    }
  }
  // A built-in kind drops an empty list (omitempty); a custom resource stores `[]` as sent.
  if (m.length === 0 && walk.builtIn) return;
  if (absent(c, schema, walk)) record(walk, ChangeOp.Add, undefined, m);
  else if (!atomicEqual(m, c, schema, walk.builtIn)) record(walk, ChangeOp.Change, c, m);
}

/** Returns false when the declaration has items without a merge key, or two with one: then the list compares whole. */
function compareKeyed(
  o: JsonArray | undefined,
  m: JsonArray,
  c: readonly unknown[],
  schema: FieldSchema,
  walk: Walk,
): boolean {
  for (const item of m) if (!hasPrimaryKey(item, schema)) return false;
  if (hasDuplicateKeys(m, schema)) return false;
  const live = finder(c, schema);
  const original = o ? finder(o, schema) : undefined;
  const itemSchema = schema.items;
  for (const item of m) {
    walk.path.push({ key: itemKeyFields(item as JsonObject, schema) });
    const liveItem = live(item);
    if (liveItem === undefined) record(walk, ChangeOp.Add, undefined, item);
    else compareValue(original?.(item) as JsonValue | undefined, item, liveItem, itemSchema, walk);
    walk.path.pop();
  }
  if (o) {
    const declared = finder(m, schema);
    for (const item of o) {
      if (!hasPrimaryKey(item, schema) || declared(item) !== undefined) continue;
      const liveItem = live(item);
      if (liveItem === undefined) continue;
      walk.path.push({ key: itemKeyFields(item as JsonObject, schema) });
      record(walk, ChangeOp.Remove, liveItem, undefined);
      walk.path.pop();
    }
  }
  return true;
}

/**
 * Looks items up by merge key. Lists are usually short (a few containers, ports, env vars), where a
 * scan beats building an index; long ones get an index. The API server rejects duplicate keys; if a
 * list has them anyway, the first one wins, as in strategic merge.
 */
function finder(items: readonly unknown[], schema: FieldSchema): (probe: unknown) => unknown {
  if (items.length <= 16) {
    return (probe) => {
      for (const item of items) if (sameKey(probe, item, schema)) return item;
      return undefined;
    };
  }
  const index = new Map<string, unknown>();
  for (const item of items) {
    const key = itemKey(item, schema);
    if (key !== undefined && !index.has(key)) index.set(key, item);
  }
  return (probe) => {
    const key = itemKey(probe, schema);
    return key === undefined ? undefined : index.get(key);
  };
}

function compareSet(o: JsonArray | undefined, m: JsonArray, c: readonly unknown[], walk: Walk): void {
  const live = new Set(c.map(memberKey));
  const declared = new Set(m.map(memberKey));
  for (const member of m) {
    if (live.has(memberKey(member)) || isObject(member) || Array.isArray(member)) continue;
    walk.path.push({ member });
    record(walk, ChangeOp.Add, undefined, member);
    walk.path.pop();
  }
  for (const member of o ?? []) {
    const key = memberKey(member);
    if (declared.has(key) || !live.has(key) || isObject(member) || Array.isArray(member)) continue;
    walk.path.push({ member });
    record(walk, ChangeOp.Remove, member, undefined);
    walk.path.pop();
  }
}

function memberKey(value: unknown): string {
  return `${typeof value}:${String(value)}`;
}
