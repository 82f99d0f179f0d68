/**
 * Step two, against the cluster's types: each manifest's kind is resolved (CRDs in the source first,
 * then the resolver), the object is placed in its namespace for this sync, hashed, and checked for
 * duplicates. Separate from reading so the reconciler can re-run it after discovery changes (a CRD
 * was just installed) without reading files again.
 */
import { SourceFormat } from "@driftless/api";
import { declareObject, resolveKinds, unknownKind } from "./declare-object.ts";
import type { DeclareOptions } from "./declare-object.ts";
import { UnknownKindAtReadError } from "./errors.ts";
import type { SourceError } from "./errors.ts";
import { findDuplicates } from "./duplicates.ts";
import { checkSelectorObjects, selectForCluster } from "./cluster-selection.ts";
import { checkIllegalKinds } from "./illegal-kinds.ts";
import {
  isNamespaceSelector,
  namespaceSelectedClusterScoped,
  namespaceSelectorOf,
  readNamespaceSelectors,
  selectedNamespaces,
  unknownNamespaceSelector,
} from "./namespace-selection.ts";
import { NamespaceAndSelectorError } from "./selector-errors.ts";
import type { KindInfo } from "./kinds.ts";
import { manifestResource, what } from "./hierarchy-raw.ts";
import { declareHierarchy } from "./hierarchy.ts";
import { kindKey } from "./kinds.ts";
import type { Manifest } from "./manifest.ts";
import type { DeclaredObject, ManifestSet, SourceResult } from "./result.ts";
import { shapeOf, toSourceResult } from "./result.ts";
import { placeObject } from "./scope.ts";
import type { SyncScope } from "./scope.ts";
import { checkObjectRules, checkUnmanagedNamespaces } from "./validate-objects.ts";

export type { DeclareOptions };

/**
 * Turns a ManifestSet into the sync's declared objects. Errors from reading are carried over, so the
 * result is complete only if both steps found nothing wrong. Rejects only if the resolver rejects
 * (discovery failing is not a problem with the source).
 */
export async function declareObjects(set: ManifestSet, options: DeclareOptions): Promise<SourceResult> {
  if (options.format === SourceFormat.Hierarchy && options.scope.kind === "RootSync")
    return declareHierarchy(set, options);
  const counts = shapeOf(set);
  // Config Sync's first stage looks at every object read, flawed ones too, so one pass reports all of an
  // object's errors; its checks stop the read before selection, placement and duplicates.
  const stageChecks = [
    ...checkIllegalKinds(set.identified, SourceFormat.Unstructured),
    ...checkObjectRules(set.identified),
    ...checkSelectorObjects(set.identified),
  ];
  if (stageChecks.length > 0) return toSourceResult([], [...set.errors, ...stageChecks], counts);
  // Errors from reading (file syntax, reserved metadata, names) are first-stage errors too: later stages
  // still run, for the partial objects vet and diff show, but their errors are not reported beside them.
  const laterErrors = (errors: readonly SourceError[]): readonly SourceError[] =>
    set.errors.length > 0 ? set.errors : errors;
  const selection = selectForCluster(set.manifests, options.clusterName);
  if (selection.errors.length > 0) return toSourceResult([], laterErrors(selection.errors), counts);
  const rootSync = options.scope.kind === "RootSync";
  const manifests = selection.manifests.filter((m) => !isNamespaceSelector(m));
  const namespaceSelectors = rootSync ? readNamespaceSelectors(selection.manifests, false) : undefined;
  // NamespaceSelectors are Config Sync's own cluster-scoped kind, whatever the cluster serves, checked as
  // any cluster-scoped object: a RepoSync may not declare them (KNV1058; objects naming one are not
  // reported as well), a RootSync's may not declare a namespace (KNV1052) or be namespace-selected (KNV1004).
  const selectorObjects = selection.manifests.filter(isNamespaceSelector);
  const refusedSelectors = rootSync ? [] : selectorObjects;
  const kinds = await resolveKinds(manifests, options.kinds);
  const errors: SourceError[] = [...(namespaceSelectors?.errors ?? [])];
  const setAside: SourceError[] = [];
  for (const manifest of selectorObjects) {
    const problem = clusterScopedProblem(manifest, options.scope);
    if (problem) errors.push(problem);
  }
  const objects: DeclaredObject[] = [];
  const selected: { manifest: Manifest; info: KindInfo; selector: string }[] = [];
  for (const manifest of manifests) {
    const info = kinds.get(kindKey(manifest.apiVersion, manifest.kind));
    if (!info) {
      if (options.setAsideUnknownKinds === true) setAside.push(unknownKind(manifest));
      else if (options.allowUnknownKinds !== true) errors.push(unknownKind(manifest));
      else {
        const placement = placeObject(manifest, undefined, options.scope);
        if (placement.ok) objects.push(undeclaredKind(manifest, placement.namespace));
        else errors.push(placement.error);
      }
      continue;
    }
    const selector = namespaceSelectorOf(manifest);
    if (selector !== undefined) {
      const problem = selectorProblem(manifest, info);
      if (problem) errors.push(problem);
      else if (!refusedSelectors.some((m) => m.metadata.name === selector)) selected.push({ manifest, info, selector });
      continue;
    }
    const placement = placeObject(manifest, info.namespaced, options.scope);
    if (!placement.ok) {
      errors.push(placement.error);
      continue;
    }
    objects.push(declareObject(manifest, info, placement.namespace));
  }
  // Config Sync's scoped stage stops on its checks' errors (all but an unknown kind's) before it copies
  // namespace-selected objects, and that copying stops on its errors before the duplicate checks.
  const scopeFailed = errors.some((error) => !(error instanceof UnknownKindAtReadError));
  const selectionErrors: SourceError[] = [];
  // Namespace-selected objects are copied into every namespace their selector selects.
  if (selected.length > 0 && (namespaceSelectors?.errors.length ?? 0) === 0) {
    const selectors = namespaceSelectors?.selectors ?? new Map();
    const chosen = selectedNamespaces(selectors, manifests, options.liveNamespaces ?? []);
    for (const { manifest, info, selector } of selected) {
      const namespaces = chosen.get(selector);
      if (namespaces === undefined) selectionErrors.push(unknownNamespaceSelector(manifest, selector));
      else for (const namespace of namespaces) objects.push(declareObject(manifest, info, namespace));
    }
  }
  if (!scopeFailed) errors.push(...selectionErrors);
  if (!scopeFailed && selectionErrors.length === 0)
    errors.push(...findDuplicates(objects), ...checkUnmanagedNamespaces(objects));
  return toSourceResult(objects, laterErrors(errors), counts, setAside);
}

/** A namespace selector on a cluster-scoped object (KNV1004), or next to metadata.namespace (KNV1053). */
function selectorProblem(manifest: Manifest, info: KindInfo): SourceError | undefined {
  if (!info.namespaced) return namespaceSelectedClusterScoped(manifest);
  if (manifest.metadata.namespace !== undefined) {
    const message = `${what(manifest)}: declares both metadata.namespace and the annotation configmanagement.gke.io/namespace-selector; remove one`;
    return new NamespaceAndSelectorError(message, { resources: [manifestResource(manifest)] });
  }
  return undefined;
}

/** Config Sync's checks of a cluster-scoped object, in its order: scope and namespace, then no namespace selector. */
function clusterScopedProblem(manifest: Manifest, scope: SyncScope): SourceError | undefined {
  const placement = placeObject(manifest, false, scope);
  if (!placement.ok) return placement.error;
  return namespaceSelectorOf(manifest) === undefined ? undefined : namespaceSelectedClusterScoped(manifest);
}

/** Offline: an object of a kind nobody defines, in the namespace placement gave it ("" for none). */
function undeclaredKind(manifest: Manifest, namespace: string): DeclaredObject {
  return declareObject(
    manifest,
    { group: manifest.group, version: manifest.version, resource: "", namespaced: namespace !== "" },
    namespace,
  );
}
