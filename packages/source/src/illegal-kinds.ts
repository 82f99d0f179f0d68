/**
 * Kinds a source may not declare at all, whatever their content, checked on every object (flawed ones
 * too) in the first stage, as Config Sync does: Config Sync's `Sync` and CRDs of its own API groups
 * (KNV1043), and outside a hierarchy, the kinds that configure one (KNV1032).
 */
import { SourceFormat } from "@driftless/api";
import { ConfigManagementGroup, CrdGroup, CrdKind } from "./constants.ts";
import { malformedCrdProblem } from "./crd-shape.ts";
import { UnsupportedObjectError } from "./errors.ts";
import type { SourceError } from "./errors.ts";
import { IllegalHierarchicalKindError } from "./hierarchy-errors.ts";
import { HierarchyKind, isKind } from "./hierarchy-layout.ts";
import { manifestResource, what } from "./hierarchy-raw.ts";
import { isJsonObject } from "./json.ts";
import type { Manifest } from "./manifest.ts";

/** The API groups of Config Sync's own types; a CRD in them would redefine the reconciler's API. */
const ownGroups: ReadonlySet<string> = new Set([ConfigManagementGroup, "configsync.gke.io"]);

/** One error per object of an illegal kind, in reading order. */
export function checkIllegalKinds(manifests: readonly Manifest[], format: SourceFormat): SourceError[] {
  return manifests.flatMap((manifest) => {
    const error = illegalKind(manifest, format);
    return error ? [error] : [];
  });
}

/** Why this object may not be declared in a source of this format, if it may not. */
export function illegalKind(manifest: Manifest, format: SourceFormat): SourceError | undefined {
  const resources = [manifestResource(manifest)];
  if (manifest.group === ConfigManagementGroup && manifest.kind === "Sync") {
    const message = `${what(manifest)}: Sync objects are written by Config Sync's importer and may not be declared; remove it`;
    return new UnsupportedObjectError(message, { resources });
  }
  const crdGroup = manifest.group === CrdGroup && manifest.kind === CrdKind ? crdSpecGroup(manifest) : undefined;
  if (crdGroup !== undefined && ownGroups.has(crdGroup)) {
    const message = `${what(manifest)}: CRDs in the ${crdGroup} API group belong to Config Sync and may not be declared; use another group`;
    return new UnsupportedObjectError(message, { resources });
  }
  if (format !== SourceFormat.Hierarchy && isHierarchical(manifest)) {
    const message = `${what(manifest)}: ${manifest.kind} is only allowed with sourceFormat: hierarchy; remove it, or set spec.sourceFormat to hierarchy`;
    return new IllegalHierarchicalKindError(message, { resources });
  }
  return undefined;
}

/** Repo and HierarchyConfig configure a hierarchical source. */
function isHierarchical(manifest: Manifest): boolean {
  return isKind(manifest, HierarchyKind.Repo) || isKind(manifest, HierarchyKind.HierarchyConfig);
}

/** A malformed CRD is KNV1065 alone (validate-objects.ts), as Config Sync reads its group only once it converts. */
function crdSpecGroup(manifest: Manifest): string | undefined {
  if (malformedCrdProblem(manifest) !== undefined) return undefined;
  const spec = manifest.raw["spec"];
  const group = isJsonObject(spec) ? spec["group"] : undefined;
  return typeof group === "string" ? group : undefined;
}
