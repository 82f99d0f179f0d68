/**
 * NamespaceSelectors in a hierarchy, after inheritance (Config Sync's order): an annotated object stays
 * in a namespace only if its selector matches the labels of that namespace's Namespace (with the HNC
 * depth labels, which Config Sync has written by then). The selector must sit in the object's
 * directory or one above it (KNV1013), and may not be dynamic (KNV1014). A namespace-selected
 * cluster-scoped object or Namespace (KNV1004) was refused with the scopes, before this stage.
 */
import type { SourceError } from "./errors.ts";
import { dirOf, isNamespace } from "./hierarchy-layout.ts";
import { manifestResource, what } from "./hierarchy-raw.ts";
import type { Placed } from "./hierarchy-tree.ts";
import type { Manifest } from "./manifest.ts";
import { namespaceSelectorOf, readNamespaceSelectors, unknownNamespaceSelector } from "./namespace-selection.ts";
import { UnknownSelectorError } from "./selector-errors.ts";

export function selectInHierarchy<T extends { readonly manifest: Manifest }>(
  placed: readonly Placed<T>[],
  cluster: readonly T[],
  selectorManifests: readonly Manifest[],
  labelsOf: (namespace: Manifest) => Readonly<Record<string, string>>,
): { readonly placed: readonly Placed<T>[]; readonly errors: readonly SourceError[] } {
  const { selectors, errors: selectorErrors } = readNamespaceSelectors(selectorManifests, true);
  const errors: SourceError[] = [...selectorErrors];
  const checked = new Set<Manifest>();
  const namespaces = new Map<string, Readonly<Record<string, string>>>();
  for (const { entry } of placed) {
    const { manifest } = entry;
    if (isNamespace(manifest)) {
      namespaces.set(manifest.metadata.name, labelsOf(manifest));
      continue; // refused above if annotated
    }
    const name = namespaceSelectorOf(manifest);
    if (name === undefined || checked.has(manifest)) continue;
    checked.add(manifest);
    const selector = selectors.get(name);
    if (selector === undefined) {
      if (!selectorErrors.some((e) => e.resources.some((r) => r.name === name))) {
        errors.push(unknownNamespaceSelector(manifest, name));
      }
    } else if (!`${dirOf(manifest.sourcePath)}/`.startsWith(`${dirOf(selector.manifest.sourcePath)}/`)) {
      const message = `${what(manifest)}: NamespaceSelector "${name}" (${selector.manifest.sourcePath}) must be in the object's directory or one above it; move it up, or remove the annotation`;
      errors.push(
        new UnknownSelectorError(message, {
          resources: [manifestResource(selector.manifest), manifestResource(manifest)],
        }),
      );
    }
  }
  if (errors.length > 0) return { placed: [], errors };
  const kept = placed.filter(({ entry, namespace }) => {
    const name = namespaceSelectorOf(entry.manifest);
    if (name === undefined) return true;
    return selectors.get(name)?.matches(namespaces.get(namespace) ?? {}) === true;
  });
  return { placed: kept, errors };
}
