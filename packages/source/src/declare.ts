/**
 * Step two, against the cluster's types: each manifest's kind is resolved (CRDs in the source first,
 * then the resolver), the object is placed in its namespace for this sync, hashed, and checked for
 * duplicates. Separate from reading so the reconciler can re-run it after discovery changes (a CRD
 * was just installed) without reading files again.
 */
import { SourceFormat } from "@driftless/api";
import { declareObject, resolveKinds, unknownKind } from "./declare-object.ts";
import type { DeclareOptions } from "./declare-object.ts";
import type { SourceError } from "./errors.ts";
import { findDuplicates } from "./duplicates.ts";
import { IllegalHierarchicalKindError } from "./hierarchy-errors.ts";
import { HierarchyKind, isKind } from "./hierarchy-layout.ts";
import { manifestResource, what } from "./hierarchy-raw.ts";
import { declareHierarchy } from "./hierarchy.ts";
import { kindKey } from "./kinds.ts";
import type { Manifest } from "./manifest.ts";
import type { DeclaredObject, ManifestSet, SourceResult } from "./result.ts";
import { toSourceResult } from "./result.ts";
import { placeObject } from "./scope.ts";

export type { DeclareOptions };

/**
 * Turns a ManifestSet into the sync's declared objects. Errors from reading are carried over, so the
 * result is complete only if both steps found nothing wrong. Rejects only if the resolver rejects
 * (discovery failing is not a problem with the source).
 */
export async function declareObjects(set: ManifestSet, options: DeclareOptions): Promise<SourceResult> {
  if (options.format === SourceFormat.Hierarchy && options.scope.kind === "RootSync")
    return declareHierarchy(set, options);
  const kinds = await resolveKinds(set.manifests, options.kinds);
  const errors: SourceError[] = [...set.errors];
  const objects: DeclaredObject[] = [];
  for (const manifest of set.manifests) {
    if (isHierarchical(manifest)) {
      errors.push(hierarchicalKind(manifest));
      continue;
    }
    const info = kinds.get(kindKey(manifest.apiVersion, manifest.kind));
    if (!info) {
      if (options.allowUnknownKinds === true) objects.push(undeclaredKind(manifest));
      else errors.push(unknownKind(manifest));
      continue;
    }
    const placement = placeObject(manifest, info.namespaced, options.scope);
    if (!placement.ok) {
      errors.push(placement.error);
      continue;
    }
    objects.push(declareObject(manifest, info, placement.namespace));
  }
  const duplicates = findDuplicates(objects);
  errors.push(...duplicates);
  return toSourceResult(objects, errors, { fileCount: set.fileCount, localConfigSkipped: set.localConfigSkipped });
}

/** Repo and HierarchyConfig configure a hierarchical source; Config Sync refuses them elsewhere (KNV1032). */
function isHierarchical(manifest: Manifest): boolean {
  if (manifest.group !== HierarchyKind.Repo.group) return false;
  return isKind(manifest, HierarchyKind.Repo) || isKind(manifest, HierarchyKind.HierarchyConfig);
}

function hierarchicalKind(manifest: Manifest): IllegalHierarchicalKindError {
  return new IllegalHierarchicalKindError(
    `${what(manifest)}: ${manifest.kind} is only allowed with sourceFormat: hierarchy; remove it, or set spec.sourceFormat to hierarchy`,
    { resources: [manifestResource(manifest)] },
  );
}

/** Offline: an object of a kind nobody defines keeps the namespace it declares. */
function undeclaredKind(manifest: Manifest): DeclaredObject {
  const namespace = manifest.metadata.namespace;
  return declareObject(
    manifest,
    { group: manifest.group, version: manifest.version, resource: "", namespaced: namespace !== undefined },
    namespace ?? "",
  );
}
