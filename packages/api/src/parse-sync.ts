/**
 * The edge where a RootSync/RepoSync read from the cluster (or a file) becomes a typed value.
 * Every problem is reported at once as a KNV1061 InvalidSyncError, the way Config Sync reports an
 * invalid sync on its Stalled condition; a valid sync comes back with defaults filled in, so no
 * caller ever re-derives "branch defaults to master".
 */
import { DeletionPropagationPolicy, SyncAnnotation } from "./annotations.ts";
import { Limits, RootSyncNamespace } from "./defaults.ts";
import { ApiVersion, Kind, isSyncKind, type SyncKind } from "./groups.ts";
import { InvalidSyncError, type SyncIdentity } from "./invalid-sync-error.ts";
import { dns1123LabelErrors, dns1123SubdomainErrors } from "./kube-names.ts";
import { InventoryOverflowSuffix, nsReconcilerName, reconcilerName } from "./names.ts";
import type { ObjectMeta } from "./object-meta.ts";
import { parseSyncSpec } from "./parse-sync-spec.ts";
import { FieldReader, isRecord, type JsonRecord } from "./read-fields.ts";
import type { SyncCondition, SyncStatusFields } from "./sync-status-types.ts";
import {
  GitAuthTypesWithSecret,
  type RepoSync,
  type RepoSyncSpec,
  type RootSync,
  type RootSyncSpec,
  type RSync,
} from "./sync-types.ts";

export type ParseResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: readonly InvalidSyncError[] };

const servedApiVersions: readonly string[] = [ApiVersion.ConfigSyncV1Beta1, ApiVersion.ConfigSyncV1Alpha1];

/** Parses a RootSync or a RepoSync, whichever `kind` says. */
export function parseSync(input: unknown): ParseResult<RSync> {
  const kind = isRecord(input) ? input["kind"] : undefined;
  return parse(input, isSyncKind(kind) ? kind : undefined);
}

export function parseRootSync(input: unknown): ParseResult<RootSync> {
  return parse(input, Kind.RootSync) as ParseResult<RootSync>;
}

export function parseRepoSync(input: unknown): ParseResult<RepoSync> {
  return parse(input, Kind.RepoSync) as ParseResult<RepoSync>;
}

function parse(input: unknown, expected: SyncKind | undefined): ParseResult<RSync> {
  const reader = new FieldReader();
  const raw = isRecord(input) ? input : {};
  const rawMeta = isRecord(raw["metadata"]) ? raw["metadata"] : {};
  const identity: SyncIdentity = {
    kind: expected ?? Kind.RootSync,
    namespace: typeof rawMeta["namespace"] === "string" ? rawMeta["namespace"] : "",
    name: typeof rawMeta["name"] === "string" ? rawMeta["name"] : "",
  };
  const fail = (message: string): ParseResult<RSync> => ({
    ok: false,
    errors: [new InvalidSyncError(identity, message)],
  });

  if (!isRecord(input)) return fail("a RootSync or RepoSync must be an object");
  if (expected === undefined || raw["kind"] !== expected) {
    return fail(`kind must be ${expected ?? "RootSync or RepoSync"} (got ${JSON.stringify(raw["kind"])})`);
  }
  if (typeof raw["apiVersion"] !== "string" || !servedApiVersions.includes(raw["apiVersion"])) {
    return fail(`apiVersion must be one of ${servedApiVersions.join(", ")} (got ${JSON.stringify(raw["apiVersion"])})`);
  }

  // Where the sync lives and how long its name is come first and alone, in Config Sync's words: such a
  // sync must be re-created elsewhere or renamed, whatever its spec says (Config Sync stops there too).
  let misplaced: string | undefined;
  const metadata = parseMetadata(expected, raw, reader, (message) => (misplaced = message));
  if (misplaced !== undefined) return fail(misplaced);
  const spec = parseSyncSpec(expected, reader.record(raw, "spec", "") ?? {}, reader);
  const status = parseStatus(raw["status"]);
  if (reader.problems.length > 0) {
    // A problem in Config Sync's words leads with its own subject ("RootSyncs must specify ...").
    const own = [`${expected}s `, `${expected} field `, "Invalid reconciler name "];
    const phrase = (p: string): string => (own.some((lead) => p.startsWith(lead)) ? p : `${expected} ${p}`);
    return { ok: false, errors: reader.problems.map((p) => new InvalidSyncError(identity, phrase(p))) };
  }
  if (expected === Kind.RepoSync) {
    const secretName = managedSecretNameProblem(identity.namespace, identity.name, spec as RepoSyncSpec);
    if (secretName !== undefined) return fail(secretName);
  }
  const base = { apiVersion: raw["apiVersion"], metadata, ...(status === undefined ? {} : { status }) };
  const value: RSync =
    expected === Kind.RootSync
      ? { ...base, kind: Kind.RootSync, spec: spec as RootSyncSpec }
      : { ...base, kind: Kind.RepoSync, spec: spec as RepoSyncSpec };
  return { ok: true, value };
}

function parseMetadata(
  kind: SyncKind,
  raw: JsonRecord,
  reader: FieldReader,
  misplaced: (message: string) => void,
): ObjectMeta {
  const meta = reader.record(raw, "metadata", "") ?? {};
  const path = "metadata";
  const name = reader.requiredString(meta, "name", path) ?? "";
  const namespace = reader.requiredString(meta, "namespace", path) ?? "";
  const annotations = reader.stringMap(meta, "annotations", path);

  if (name !== "" && namespace !== "") checkNames(kind, namespace, name, reader, misplaced);
  const policy = annotations?.[SyncAnnotation.DeletionPropagationPolicy];
  if (policy !== undefined && !Object.values<string>(DeletionPropagationPolicy).includes(policy)) {
    reader.problem(
      `${kind}s which specify the annotation "${SyncAnnotation.DeletionPropagationPolicy}" must use one of the values "Foreground" or "Orphan" (got "${policy}")`,
    );
  }

  const generation = meta["generation"];
  return compact({
    name,
    namespace,
    uid: reader.string(meta, "uid", path),
    resourceVersion: reader.string(meta, "resourceVersion", path),
    generation: typeof generation === "number" ? generation : undefined,
    creationTimestamp: reader.string(meta, "creationTimestamp", path),
    deletionTimestamp: reader.string(meta, "deletionTimestamp", path),
    labels: reader.stringMap(meta, "labels", path),
    annotations,
    finalizers: reader.strings(meta, "finalizers", path),
  });
}

/**
 * Where a sync may live and how long its name may be follow from the names derived from it:
 * the reconciler name, and the inventory-id label `<ns>_<name>` (label values stop at 63). As Config
 * Sync's, the checks stop at the first of namespace and length, in its words, so the message is its own.
 */
function checkNames(
  kind: SyncKind,
  namespace: string,
  name: string,
  reader: FieldReader,
  problem: (message: string) => void,
): void {
  if (kind === Kind.RootSync) {
    if (namespace !== RootSyncNamespace)
      return problem(`RootSync objects are only allowed in the ${RootSyncNamespace} namespace, not in ${namespace}`);
    if (name.length > Limits.maxRootSyncNameLength)
      return problem(`maximum length of RootSync name is ${Limits.maxRootSyncNameLength}, but found ${name.length}`);
  } else {
    if (namespace === RootSyncNamespace)
      return problem(`RepoSync objects are not allowed in the ${RootSyncNamespace} namespace`);
    const combined = namespace.length + name.length;
    if (combined > Limits.maxRepoSyncNamespaceAndNameLength)
      return problem(
        `maximum combined length of RepoSync name and namespace is ${Limits.maxRepoSyncNamespaceAndNameLength}, but found ${combined}`,
      );
  }
  // `<sync>.pending` is the overflow ResourceGroup of the sync named `<sync>`, which its reconciler may
  // write: a sync of that name would have its inventory writable by a sibling's reconciler.
  if (name.endsWith(InventoryOverflowSuffix))
    reader.problem(
      `metadata.name may not end in "${InventoryOverflowSuffix}": that is the name of the second ResourceGroup of the sync "${name.slice(0, -InventoryOverflowSuffix.length)}"`,
    );
  const reconciler = reconcilerName(kind, namespace, name);
  // Config Sync requires a DNS-1123 subdomain; the 63-character cap is ours, because the name
  // is also written as a label value on the reconciler's pods.
  const problems = [
    ...dns1123SubdomainErrors(reconciler),
    ...dns1123LabelErrors(reconciler).filter((e) => e.includes("63")),
  ];
  if (problems.length > 0) reader.problem(`Invalid reconciler name "${reconciler}": ${problems.join(", ")}`);
}

/**
 * Config Sync's reconciler-manager copies a RepoSync's Git Secret as `<reconciler>-<secretRef.name>` and
 * refuses the sync, in these words, when that is no DNS-1123 subdomain (a 253-character secretRef.name).
 * driftless reads the Secret where it is, but refuses the same syncs, so one valid here is valid there.
 */
function managedSecretNameProblem(namespace: string, name: string, spec: RepoSyncSpec): string | undefined {
  const git = spec.git;
  const secretRefName = git?.secretRef?.name;
  if (spec.sourceType !== "git" || git === undefined || secretRefName === undefined) return undefined;
  if (!GitAuthTypesWithSecret.includes(git.auth)) return undefined;
  const managed = `${nsReconcilerName(namespace, name)}-${secretRefName}`;
  const problems = dns1123SubdomainErrors(managed);
  if (problems.length === 0) return undefined;
  return `The managed secret name "${managed}" is invalid: ${problems.join(", ")}. To fix it, update '.spec.git.secretRef.name'`;
}

/**
 * Status is written by driftless itself, so it is checked only as far as the helpers that read
 * it need: conditions must have a string type and status. Anything else is passed through.
 */
function parseStatus(raw: unknown): SyncStatusFields | undefined {
  if (!isRecord(raw)) return undefined;
  const conditions = Array.isArray(raw["conditions"])
    ? raw["conditions"].filter(
        (c: unknown): c is SyncCondition =>
          isRecord(c) && typeof c["type"] === "string" && typeof c["status"] === "string",
      )
    : undefined;
  return { ...(raw as SyncStatusFields), ...(conditions === undefined ? {} : { conditions }) };
}

function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
