/**
 * NamespaceSelectors (`configmanagement.gke.io/v1`), referred to by name from an object's
 * `configmanagement.gke.io/namespace-selector` annotation. In a hierarchy they filter what a
 * namespace holds or inherits by the labels of its declared Namespace (static only). In an
 * unstructured source an annotated namespaced object declares no namespace and is copied into every
 * selected namespace: `mode: static` (the default) selects among the Namespaces the source declares,
 * `mode: dynamic` among those on the cluster too (not terminating), so objects follow namespaces as
 * their labels change. As in Config Sync, once any selector of a source is dynamic, every selector of
 * it also selects among the cluster's namespaces.
 */
import type { SourceError } from "./errors.ts";
import { DuplicateObjectError, UnparsableConfigError } from "./errors.ts";
import { SelectorAnnotation } from "./cluster-selection.ts";
import { HierarchyKind, isKind, isNamespace, isSelecting } from "./hierarchy-layout.ts";
import { manifestResource, what } from "./hierarchy-raw.ts";
import { isJsonObject } from "./json.ts";
import { parseLabelSelector } from "./label-selector.ts";
import type { LabelMatcher, Labels } from "./label-selector.ts";
import type { Manifest } from "./manifest.ts";
import { IllegalSelectorAnnotationError, InvalidSelectorError, UnknownSelectorError } from "./selector-errors.ts";
import { decodeSelectorSpec } from "./selector-spec.ts";

/** A Namespace on the cluster, as dynamic NamespaceSelectors see it. */
export interface LiveNamespace {
  readonly name: string;
  readonly labels: Labels;
  /** status.phase Terminating: never selected. */
  readonly terminating?: boolean;
}

export interface NamespaceSelector {
  readonly manifest: Manifest;
  readonly matches: LabelMatcher;
  readonly dynamic: boolean;
}

/** A NamespaceSelector that selection reads; of another version than v1 it is an ordinary object, as in Config Sync. */
export function isNamespaceSelector(manifest: Manifest): boolean {
  return isSelecting(manifest, HierarchyKind.NamespaceSelector);
}

/** By group and kind, whatever the version, as Config Sync's check of selector names. */
function isAnyNamespaceSelector(manifest: Manifest): boolean {
  return isKind(manifest, HierarchyKind.NamespaceSelector);
}

/** The selector an object names, if any. */
export function namespaceSelectorOf(manifest: Manifest): string | undefined {
  return manifest.metadata.annotations?.[SelectorAnnotation.Namespace];
}

function modeOf(manifest: Manifest): unknown {
  const spec = manifest.raw["spec"];
  return isJsonObject(spec) ? spec["mode"] : undefined;
}

/** Whether any NamespaceSelector among these is `mode: dynamic` (the reconciler then watches Namespaces). */
export function usesDynamicNamespaceSelector(manifests: readonly Manifest[]): boolean {
  return manifests.some((m) => isNamespaceSelector(m) && modeOf(m) === "dynamic");
}

/** Every selector by name; `hierarchy`: dynamic mode is refused, as in Config Sync. */
export function readNamespaceSelectors(
  manifests: readonly Manifest[],
  hierarchy: boolean,
): { readonly selectors: ReadonlyMap<string, NamespaceSelector>; readonly errors: readonly SourceError[] } {
  const errors: SourceError[] = [];
  const byName = new Map<string, Manifest[]>();
  for (const manifest of manifests) {
    if (!isAnyNamespaceSelector(manifest)) continue;
    const same = byName.get(manifest.metadata.name);
    if (same) same.push(manifest);
    else byName.set(manifest.metadata.name, [manifest]);
  }
  const selectors = new Map<string, NamespaceSelector>();
  for (const [name, same] of byName) {
    const [manifest] = same;
    if (manifest === undefined) continue;
    if (same.length > 1) {
      errors.push(duplicateSelectorError(name, same));
      continue;
    }
    if (!isNamespaceSelector(manifest)) continue;
    const invalid = (problem: string): void => {
      errors.push(
        new InvalidSelectorError(`${what(manifest)}: ${problem}`, { resources: [manifestResource(manifest)] }),
      );
    };
    // Config Sync's sentence first, then the object: its users and its CLI tests match on `KNV1014: <sentence>`.
    const invalidMode = (sentence: string, fix: string): void => {
      errors.push(
        new InvalidSelectorError(`${sentence}: ${what(manifest)}; ${fix}`, { resources: [manifestResource(manifest)] }),
      );
    };
    const spec = decodeSelectorSpec(manifest);
    if (spec instanceof UnparsableConfigError) {
      errors.push(spec);
      continue;
    }
    const { mode } = spec;
    if (mode !== "" && mode !== "static" && mode !== "dynamic") {
      invalidMode(
        "Unknown mode defined in NamespaceSelector",
        `spec.mode is ${JSON.stringify(mode)}; use "static" or "dynamic"`,
      );
      continue;
    }
    if (hierarchy && mode === "dynamic") {
      invalidMode(
        "NamespaceSelector MUST NOT use the dynamic mode with the hierarchy source format",
        "switch to the unstructured source format, or remove spec.mode",
      );
      continue;
    }
    const parsed = parseLabelSelector(spec.selector);
    if ("problem" in parsed) invalid(parsed.problem);
    else selectors.set(name, { manifest, matches: parsed.matcher, dynamic: mode === "dynamic" });
  }
  return { selectors, errors };
}

/** NamespaceSelectors sharing a name (KNV1029), one error per name. */
export function duplicateNamespaceSelectors(manifests: readonly Manifest[]): SourceError[] {
  const byName = Map.groupBy(manifests.filter(isAnyNamespaceSelector), (manifest) => manifest.metadata.name);
  return [...byName].filter(([, same]) => same.length > 1).map(([name, same]) => duplicateSelectorError(name, same));
}

function duplicateSelectorError(name: string, same: readonly Manifest[]): DuplicateObjectError {
  const message = `NamespaceSelectors must have unique names; "${name}" is declared in ${same.map((m) => m.sourcePath).join(", ")}`;
  return new DuplicateObjectError(message, { resources: same.map(manifestResource) });
}

/** A namespace selector on a cluster-scoped object, Config Sync's own kinds included (KNV1004). */
export function namespaceSelectedClusterScoped(manifest: Manifest): IllegalSelectorAnnotationError {
  const message = `${what(manifest)}: cluster-scoped objects may not be namespace-selected; remove the annotation ${SelectorAnnotation.Namespace}`;
  return new IllegalSelectorAnnotationError(message, { resources: [manifestResource(manifest)] });
}

export function unknownNamespaceSelector(manifest: Manifest, name: string): UnknownSelectorError {
  const message = `${what(manifest)}: ${SelectorAnnotation.Namespace}: "${name}" names no declared NamespaceSelector`;
  return new UnknownSelectorError(message, { resources: [manifestResource(manifest)] });
}

/**
 * Unstructured: the namespaces each selector selects, from the declared Namespaces and (when any
 * selector is dynamic) the cluster's. A namespace selected on the cluster is not counted again.
 */
export function selectedNamespaces(
  selectors: ReadonlyMap<string, NamespaceSelector>,
  declared: readonly Manifest[],
  live: readonly LiveNamespace[],
): ReadonlyMap<string, readonly string[]> {
  const dynamic = [...selectors.values()].some((s) => s.dynamic);
  const onCluster = dynamic ? live.filter((ns) => ns.terminating !== true) : [];
  const result = new Map<string, string[]>();
  for (const [name, selector] of selectors) {
    const names: string[] = [];
    const seen = new Set<string>();
    for (const ns of onCluster) {
      if (selector.matches(ns.labels)) {
        names.push(ns.name);
        seen.add(ns.name);
      }
    }
    for (const ns of declared) {
      if (!isNamespace(ns) || seen.has(ns.metadata.name)) continue;
      if (selector.matches(ns.metadata.labels ?? {})) {
        names.push(ns.metadata.name);
        seen.add(ns.metadata.name);
      }
    }
    result.set(name, names);
  }
  return result;
}
