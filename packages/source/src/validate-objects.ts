/**
 * Rules both source formats apply, in Config Sync's two places:
 * - `checkObjectRules`, on every object read (flawed ones too), before cluster selection and kinds,
 *   as Config Sync's first validation stage does: no controller Namespace (KNV1034), no kind in a
 *   group it has left (KNV1050), a CRD that reads as one (KNV1065) and is named after its spec (KNV1048);
 * - `checkUnmanagedNamespaces`, on the objects the sync ends up declaring (after cluster and namespace
 *   selection and, in a hierarchy, inheritance), as Config Sync's last stage does (KNV1056).
 * The reconciler reads sources through these too, so a sync whose source breaks one applies nothing.
 */
import { ManagedAnnotation, ManagedValue } from "@driftless/api";
import { CrdGroup, CrdKind } from "./constants.ts";
import { malformedCrdProblem } from "./crd-shape.ts";
import {
  DeprecatedGroupKindError,
  IllegalNamespaceError,
  InvalidCrdNameError,
  MalformedCrdError,
  ManagedResourceInUnmanagedNamespaceError,
} from "./errors.ts";
import type { SourceError } from "./errors.ts";
import { isNamespace } from "./hierarchy-layout.ts";
import { manifestResource, what } from "./hierarchy-raw.ts";
import { isJsonObject } from "./json.ts";
import type { JsonValue } from "./json.ts";
import type { Manifest } from "./manifest.ts";
import type { DeclaredObject } from "./result.ts";

/** The Namespaces Config Sync's own controllers run in; a source declaring one would manage (and could prune) them. */
export const ControllerNamespaces: ReadonlySet<string> = new Set([
  "config-management-system",
  "resource-group-system",
  "config-management-monitoring",
]);

/**
 * Kinds of the `extensions` group that moved elsewhere, and where to: the group and the apiVersion to
 * declare them with now.
 */
const movedFromExtensions: ReadonlyMap<string, { readonly group: string; readonly apiVersion: string }> = new Map([
  ["DaemonSet", { group: "apps", apiVersion: "apps/v1" }],
  ["Deployment", { group: "apps", apiVersion: "apps/v1" }],
  ["ReplicaSet", { group: "apps", apiVersion: "apps/v1" }],
  ["StatefulSet", { group: "apps", apiVersion: "apps/v1" }],
  ["Ingress", { group: "networking.k8s.io", apiVersion: "networking.k8s.io/v1" }],
  ["NetworkPolicy", { group: "networking.k8s.io", apiVersion: "networking.k8s.io/v1" }],
  ["PodSecurityPolicy", { group: "policy", apiVersion: "policy/v1beta1" }],
]);

/** Every error of the first-stage rules, rule by rule, each in reading order. */
export function checkObjectRules(manifests: readonly Manifest[]): SourceError[] {
  const rules = [deprecatedGroupKind, controllerNamespace, malformedCrd, crdName];
  return rules.flatMap((rule) =>
    manifests.flatMap((manifest) => {
      const error = rule(manifest);
      return error ? [error] : [];
    }),
  );
}

/** KNV1034. */
function controllerNamespace(manifest: Manifest): SourceError | undefined {
  if (!isNamespace(manifest) || !ControllerNamespaces.has(manifest.metadata.name)) return undefined;
  return new IllegalNamespaceError(
    `${what(manifest)}: the "${manifest.metadata.name}" Namespace belongs to Config Sync and must not be declared`,
    { resources: [manifestResource(manifest)] },
  );
}

/** KNV1050: the group, not the version, decides; any `extensions` version of these kinds is refused. */
function deprecatedGroupKind(manifest: Manifest): SourceError | undefined {
  if (manifest.group !== "extensions") return undefined;
  const moved = movedFromExtensions.get(manifest.kind);
  if (moved === undefined) return undefined;
  // Config Sync's sentence first: its users and its CLI tests match on it.
  return new DeprecatedGroupKindError(
    `The config is using a deprecated Group and Kind. To fix, set the Group and Kind to "${manifest.kind}.${moved.group}" (apiVersion: ${moved.apiVersion}): ${what(manifest)}`,
    { resources: [manifestResource(manifest)] },
  );
}

/** KNV1065, in Config Sync's words first; its name is then not checked (one error per CRD, as there). */
function malformedCrd(manifest: Manifest): SourceError | undefined {
  const problem = malformedCrdProblem(manifest);
  if (problem === undefined) return undefined;
  return new MalformedCrdError(`malformed CustomResourceDefinition: ${problem}: ${what(manifest)}`, {
    resources: [manifestResource(manifest)],
  });
}

/**
 * KNV1048, for every version of CustomResourceDefinition. A missing spec, group or plural counts as
 * empty, as when Config Sync reads the object into its typed form, so such a CRD fails too.
 */
function crdName(manifest: Manifest): SourceError | undefined {
  if (manifest.group !== CrdGroup || manifest.kind !== CrdKind) return undefined;
  if (malformedCrdProblem(manifest) !== undefined) return undefined;
  const spec = manifest.raw["spec"];
  const group = stringAt(isJsonObject(spec) ? spec["group"] : undefined);
  const names = isJsonObject(spec) ? spec["names"] : undefined;
  const plural = stringAt(isJsonObject(names) ? names["plural"] : undefined);
  const expected = `${plural}.${group}`;
  if (manifest.metadata.name === expected) return undefined;
  const missing = [plural === "" ? "spec.names.plural" : "", group === "" ? "spec.group" : ""].filter(Boolean);
  const why = missing.length > 0 ? ` (${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} empty)` : "";
  return new InvalidCrdNameError(
    `${what(manifest)}: a CustomResourceDefinition must be named <spec.names.plural>.<spec.group>, here "${expected}"${why}; rename it or correct its spec`,
    { resources: [manifestResource(manifest)] },
  );
}

function stringAt(value: JsonValue | undefined): string {
  return typeof value === "string" ? value : "";
}

function managementDisabled(object: Manifest): boolean {
  return object.metadata.annotations?.[ManagedAnnotation.Managed] === ManagedValue.Disabled;
}

/**
 * KNV1056: a Namespace the source declares unmanaged may only hold objects that are unmanaged too.
 * One error per such Namespace, naming every managed object in it, in the order declared.
 */
export function checkUnmanagedNamespaces(objects: readonly DeclaredObject[]): SourceError[] {
  const unmanaged = new Map<string, DeclaredObject[]>();
  for (const object of objects) {
    if (isNamespace(object) && managementDisabled(object)) unmanaged.set(object.metadata.name, []);
  }
  if (unmanaged.size === 0) return [];
  for (const object of objects) {
    const inside = unmanaged.get(object.id.namespace);
    if (object.id.namespace !== "" && inside !== undefined && !managementDisabled(object)) inside.push(object);
  }
  return [...unmanaged].flatMap(([namespace, managed]) => {
    if (managed.length === 0) return [];
    const list = managed.map(what).join("; ");
    return [
      new ManagedResourceInUnmanagedNamespaceError(
        `Namespace "${namespace}" is declared with ${ManagedAnnotation.Managed}: ${ManagedValue.Disabled}, yet the source declares managed objects in it (${list}); remove the annotation from the Namespace, or add it to each of those objects`,
        { resources: managed.map(manifestResource) },
      ),
    ];
  });
}
