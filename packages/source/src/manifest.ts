/**
 * One candidate object to a typed `Manifest`, checking everything that can be checked without the
 * cluster: type, name, namespace syntax, label and annotation types, fields only the API server may
 * set, and depends-on syntax. Every problem is reported, not just the first, so one push can fix all.
 */
import type { ErrorResource } from "@driftless/api";
import { dns1123LabelErrors, dns1123SubdomainErrors, UserAnnotation } from "@driftless/api";
import { ConfigManagementGroup, RbacGroup } from "./constants.ts";
import { parseDependsOn } from "./depends-on.ts";
import {
  IllegalFieldError,
  InvalidAnnotationValueError,
  InvalidDependsOnError,
  InvalidNameError,
  InvalidNamespaceNameError,
  InvalidTypeError,
  ManifestParseError,
  MissingNameError,
} from "./errors.ts";
import type { SourceError } from "./errors.ts";
import { describeJsonType, isJsonArray, isJsonObject } from "./json.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import { checkReservedMetadata } from "./metadata-rules.ts";
import { pathSegmentProblem } from "./names.ts";
import type { ObjectId } from "./object-id.ts";
import { describeObject } from "./object-id.ts";
import { at } from "./parse.ts";

export interface ManifestMetadata {
  readonly name: string;
  /** As written; absent when not set (or set to ""). */
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** An object read from the source and valid on its own; not yet checked against the cluster's types. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  readonly metadata: ManifestMetadata;
  /** The object exactly as parsed. */
  readonly raw: JsonObject;
  /** Path of the file relative to the sync's dir, with "/" separators. */
  readonly sourcePath: string;
  /** Parsed `config.kubernetes.io/depends-on` references, in the order written. */
  readonly dependsOn: readonly ObjectId[];
}

export type ManifestCheck =
  | { readonly ok: true; readonly manifest: Manifest }
  | {
      readonly ok: false;
      readonly errors: readonly SourceError[];
      /**
       * The object as far as it reads (kind known, metadata a mapping), for the checks that look across
       * objects (directories, the Repo, selectors), so one pass reports all its errors. Never declared.
       */
      readonly flawed?: Manifest;
    };

export function toManifest(raw: JsonObject, sourcePath: string, location: string): ManifestCheck {
  const errors: SourceError[] = [];
  const apiVersion = raw["apiVersion"];
  const kind = raw["kind"];
  const metadataValue = raw["metadata"];
  const metadata: JsonObject = isJsonObject(metadataValue) ? metadataValue : {};
  const nameValue = metadata["name"];
  const namespaceValue = metadata["namespace"];

  const apiVersionText = typeof apiVersion === "string" ? apiVersion : undefined;
  const gv = apiVersionText !== undefined ? splitApiVersion(apiVersionText) : undefined;
  // Best-effort identity so every error names the object as far as it is known.
  const resource: ErrorResource = {
    group: gv?.group ?? "",
    ...(gv ? { version: gv.version } : {}),
    kind: typeof kind === "string" ? kind : "",
    ...(typeof namespaceValue === "string" && namespaceValue !== "" ? { namespace: namespaceValue } : {}),
    name: typeof nameValue === "string" ? nameValue : "",
    sourcePath,
  };
  const details = { resources: [resource] };
  const where = (message: string): string => at(sourcePath, location, `${describeObject(resource)}: ${message}`);

  if (apiVersion === undefined || apiVersion === "") {
    errors.push(new InvalidTypeError(where(`apiVersion is required${kustomizeHint(sourcePath)}`), details));
  } else if (!gv) {
    errors.push(
      new InvalidTypeError(
        where(`apiVersion must be "version" or "group/version", found ${describe(apiVersion)}`),
        details,
      ),
    );
  }
  if (kind === undefined || kind === "") {
    errors.push(new InvalidTypeError(where(`kind is required${kustomizeHint(sourcePath)}`), details));
  } else if (typeof kind !== "string") {
    errors.push(new InvalidTypeError(where(`kind must be a string, found ${describeJsonType(kind)}`), details));
  }
  if (metadataValue !== undefined && !isJsonObject(metadataValue)) {
    errors.push(
      new ManifestParseError(where(`metadata must be a mapping, found ${describeJsonType(metadataValue)}`), details),
    );
  }

  const group = gv?.group ?? "";
  const name = checkName(nameValue, metadata, group, resource.kind, sourcePath, where, details, errors);
  const namespace = checkNamespace(namespaceValue, where, details, errors);
  const labels = stringMap(metadata, "labels", where, details, errors);
  const annotations = stringMap(metadata, "annotations", where, details, errors);
  checkServerSetFields(raw, metadata, group, where, details, errors);
  const dependsOn = checkDependsOn(annotations, where, details, errors);
  errors.push(...checkReservedMetadata(labels, annotations, where, details));

  if (!gv || apiVersionText === undefined || typeof kind !== "string" || kind === "") return { ok: false, errors };
  const manifest = (manifestMetadata: ManifestMetadata): Manifest => ({
    apiVersion: apiVersionText,
    kind,
    group: gv.group,
    version: gv.version,
    metadata: manifestMetadata,
    raw,
    sourcePath,
    dependsOn,
  });
  if (errors.length > 0 || name === undefined) {
    // What the object says of itself, even where invalid, so later checks judge it as Config Sync's do.
    const flawed: ManifestMetadata = {
      name: typeof nameValue === "string" ? nameValue : "",
      ...(typeof namespaceValue === "string" && namespaceValue !== "" ? { namespace: namespaceValue } : {}),
      ...stringEntries(metadata, "labels"),
      ...stringEntries(metadata, "annotations"),
    };
    return { ok: false, errors, flawed: manifest(flawed) };
  }
  return {
    ok: true,
    manifest: manifest({
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      ...(labels !== undefined ? { labels } : {}),
      ...(annotations !== undefined ? { annotations } : {}),
    }),
  };
}

/** `{ [field]: its string values }` when metadata[field] is a mapping; the rest is reported by `stringMap`. */
function stringEntries(
  metadata: JsonObject,
  field: "labels" | "annotations",
): { readonly [K in typeof field]?: Readonly<Record<string, string>> } {
  const value = metadata[field];
  if (!isJsonObject(value)) return {};
  const strings = Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string");
  return { [field]: Object.fromEntries(strings) };
}

type Where = (message: string) => string;
type Details = { readonly resources: readonly ErrorResource[] };

/** `v1` or `group/version`; anything else (empty parts, extra slashes) is malformed. */
export function splitApiVersion(apiVersion: string): { readonly group: string; readonly version: string } | undefined {
  const parts = apiVersion.split("/");
  if (parts.length === 1 && parts[0]) return { group: "", version: parts[0] };
  if (parts.length === 2 && parts[0] && parts[1]) return { group: parts[0], version: parts[1] };
  return undefined;
}

function checkName(
  value: JsonValue | undefined,
  metadata: JsonObject,
  group: string,
  kind: string,
  sourcePath: string,
  where: Where,
  details: Details,
  errors: SourceError[],
): string | undefined {
  if (value === undefined || value === null || value === "") {
    const generated = metadata["generateName"] !== undefined;
    const message = generated
      ? "metadata.generateName is not supported; declare a fixed metadata.name so the object can be tracked, updated and pruned"
      : `metadata.name is required${kustomizeHint(sourcePath)}`;
    errors.push(new MissingNameError(where(message), details));
    return undefined;
  }
  if (typeof value !== "string") {
    errors.push(
      new ManifestParseError(where(`metadata.name must be a string, found ${describeJsonType(value)}`), details),
    );
    return undefined;
  }
  // RBAC allows names like "system:controller:foo".
  const problem = group === RbacGroup ? pathSegmentProblem(value) : dns1123SubdomainErrors(value)[0];
  if (problem) errors.push(new InvalidNameError(where(`metadata.name "${value}" is invalid: it ${problem}`), details));
  // A Namespace's name must also be a valid label: a second, separate error, as Config Sync reports it.
  const namespaceProblem = group === "" && kind === "Namespace" ? dns1123LabelErrors(value)[0] : undefined;
  if (namespaceProblem)
    errors.push(invalidNamespaceName("the Namespace's name", value, namespaceProblem, where, details));
  return problem || namespaceProblem ? undefined : value;
}

function checkNamespace(
  value: JsonValue | undefined,
  where: Where,
  details: Details,
  errors: SourceError[],
): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") {
    errors.push(
      new ManifestParseError(where(`metadata.namespace must be a string, found ${describeJsonType(value)}`), details),
    );
    return undefined;
  }
  const problem = dns1123LabelErrors(value)[0];
  if (problem) {
    errors.push(invalidNamespaceName("metadata.namespace", value, problem, where, details));
    return undefined;
  }
  return value;
}

function invalidNamespaceName(
  field: string,
  value: string,
  problem: string,
  where: Where,
  details: Details,
): InvalidNamespaceNameError {
  return new InvalidNamespaceNameError(
    where(`${field} "${value}" is not a valid Namespace name (a DNS-1123 label): it ${problem}`),
    details,
  );
}

/**
 * Labels and annotations must map strings to strings. An unquoted `true` or `8080` in YAML is not a
 * string, and the API server would reject the object at apply time; say which keys to quote instead.
 */
function stringMap(
  metadata: JsonObject,
  field: "labels" | "annotations",
  where: Where,
  details: Details,
  errors: SourceError[],
): Readonly<Record<string, string>> | undefined {
  const value = metadata[field];
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) {
    errors.push(
      new ManifestParseError(where(`metadata.${field} must be a mapping, found ${describeJsonType(value)}`), details),
    );
    return undefined;
  }
  const nonStrings = Object.keys(value).filter((key) => typeof value[key] !== "string");
  if (nonStrings.length > 0) {
    const keys = nonStrings.map((key) => `metadata.${field}.${key}`).join(", ");
    errors.push(
      new InvalidAnnotationValueError(
        where(`values in metadata.${field} must be strings; add quotes around: ${keys}`),
        details,
      ),
    );
    return undefined;
  }
  return value as Readonly<Record<string, string>>;
}

/**
 * Fields only the API server sets, or a controller (status), each its own KNV1045 as Config Sync reports
 * them, named and worded as nomos prints them (`metadata.ownerReference` included), in its order.
 */
function checkServerSetFields(
  raw: JsonObject,
  metadata: JsonObject,
  group: string,
  where: Where,
  details: Details,
  errors: SourceError[],
): void {
  for (const field of serverSetFields(raw, metadata, group))
    errors.push(
      new IllegalFieldError(
        where(
          `Configs with "${field}" specified are not allowed. To fix, either remove the config or remove the "${field}" field in the config`,
        ),
        details,
      ),
    );
}

function serverSetFields(raw: JsonObject, metadata: JsonObject, group: string): string[] {
  const isPresent = (value: JsonValue | undefined): boolean => value !== undefined && value !== null;
  const isSet = (value: JsonValue | undefined): boolean => isPresent(value) && value !== "";
  const owners = metadata["ownerReferences"];
  // A status copied from `kubectl get -o yaml` would fight the controller that owns it (driftless's own rule).
  const status = raw["status"];
  const checks: readonly (readonly [string, boolean])[] = [
    ["metadata.ownerReference", isJsonArray(owners) ? owners.length > 0 : isPresent(owners)],
    ["metadata.selfLink", isSet(metadata["selfLink"])],
    ["metadata.uid", isSet(metadata["uid"])],
    ["metadata.resourceVersion", isSet(metadata["resourceVersion"])],
    ["metadata.generation", isPresent(metadata["generation"]) && metadata["generation"] !== 0],
    // `creationTimestamp: null` is what `kubectl create --dry-run -o yaml` writes; only a set value is wrong
    // (`""` reads as no time to nomos too; the applier drops both before the write).
    ["metadata.creationTimestamp", isSet(metadata["creationTimestamp"])],
    ["metadata.deletionTimestamp", isSet(metadata["deletionTimestamp"])],
    ["metadata.deletionGracePeriodSeconds", isSet(metadata["deletionGracePeriodSeconds"])],
    [
      "status",
      group !== ConfigManagementGroup && (isJsonObject(status) ? Object.keys(status).length > 0 : isPresent(status)),
    ],
  ];
  return checks.filter(([, illegal]) => illegal).map(([field]) => field);
}

function checkDependsOn(
  annotations: Readonly<Record<string, string>> | undefined,
  where: Where,
  details: Details,
  errors: SourceError[],
): readonly ObjectId[] {
  const value = annotations?.[UserAnnotation.DependsOn];
  if (value === undefined) return [];
  const parsed = parseDependsOn(value);
  if (parsed.ok) return parsed.refs;
  errors.push(
    new InvalidDependsOnError(where(`invalid ${UserAnnotation.DependsOn} annotation: ${parsed.problem}`), details),
  );
  return [];
}

function describe(value: JsonValue): string {
  return typeof value === "string" ? `"${value}"` : describeJsonType(value);
}

/** kustomization.yaml is not an object; say so rather than only that it lacks fields. */
function kustomizeHint(sourcePath: string): string {
  const file = sourcePath.slice(sourcePath.lastIndexOf("/") + 1);
  return /^kustomization\.ya?ml$/i.test(file)
    ? " (a kustomization is rendered only in the sync directory itself, spec.git.dir, not below it)"
    : "";
}
