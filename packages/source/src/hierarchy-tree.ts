/**
 * The `namespaces/` tree. A directory holding a Namespace is that namespace: everything in it lands
 * there. Any other directory is an abstract namespace: what it holds is inherited by every namespace
 * below it, and by nothing else. The rules are Config Sync's:
 * - one Namespace per directory (KNV2012), and a namespace directory has no subdirectories (KNV1003);
 * - an abstract directory holding objects needs a namespace somewhere below it (KNV1044);
 * - a kind its HierarchyConfig sets to `none` may not sit in an abstract directory (KNV1007);
 * - a NamespaceSelector may not sit in a namespace directory (KNV1038).
 */
import type { SourceError } from "./errors.ts";
import { groupKindKey } from "./hierarchy-config.ts";
import type { NotInherited } from "./hierarchy-config.ts";
import {
  IllegalAbstractNamespaceObjectKindError,
  IllegalKindInNamespacesError,
  IllegalNamespaceSubdirectoryError,
  MultipleSingletonsError,
  UnsyncableResourcesError,
} from "./hierarchy-errors.ts";
import { baseOf, dirOf, isNamespace, TopDir } from "./hierarchy-layout.ts";
import { manifestResource, what } from "./hierarchy-raw.ts";
import type { Manifest } from "./manifest.ts";

interface Node<T extends { readonly manifest: Manifest }> {
  readonly dir: string;
  readonly entries: T[];
  readonly children: Node<T>[];
}

/** An object placed in the namespace it lands in, with the Namespace's place in the tree. */
export interface Placed<T> {
  readonly entry: T;
  readonly namespace: string;
}

export interface TreeResult<T> {
  readonly placed: readonly Placed<T>[];
  readonly errors: readonly SourceError[];
}

/**
 * Builds the tree from the objects under `namespaces/` (Namespaces and namespaced objects), checks
 * it, and places every object: a namespace's own objects first, then what it inherits, nearest
 * ancestor last; namespaces in path order.
 */
export function placeInTree<T extends { readonly manifest: Manifest }>(
  entries: readonly T[],
  selectors: readonly Manifest[],
  notInherited: NotInherited,
): TreeResult<T> {
  const root = buildTree(entries);
  const errors: SourceError[] = [];
  checkNamespaces(root, errors);
  checkSelectors(root, selectors, errors);
  if (errors.length > 0) return { placed: [], errors };

  const placed: Placed<T>[] = [];
  const visit = (node: Node<T>, inherited: readonly T[]): void => {
    const namespace = node.entries.find((e) => isNamespace(e.manifest));
    if (namespace !== undefined) {
      const name = baseOf(node.dir);
      for (const child of node.children) {
        errors.push(
          new IllegalNamespaceSubdirectoryError(
            `${child.dir}/: the directory ${node.dir}/ declares Namespace "${name}", so it may not have subdirectories; move ${child.dir}/ out of it`,
            { sourcePaths: [child.dir, node.dir] },
          ),
        );
      }
      for (const entry of node.entries) placed.push({ entry, namespace: isNamespace(entry.manifest) ? "" : name });
      for (const entry of inherited) placed.push({ entry, namespace: name });
      return;
    }
    for (const entry of node.entries) {
      const { group, kind } = entry.manifest;
      if (notInherited.has(groupKindKey(group, kind))) {
        errors.push(
          new IllegalAbstractNamespaceObjectKindError(
            `${what(entry.manifest)}: the HierarchyConfig sets ${kind} to hierarchyMode none, so it may not be declared in the abstract namespace directory ${node.dir}/; move it to a namespace directory`,
            { resources: [manifestResource(entry.manifest)] },
          ),
        );
      }
    }
    const below = [...inherited, ...node.entries];
    for (const child of node.children) visit(child, below);
  };
  if (root !== undefined) visit(root, []);
  return errors.length > 0 ? { placed: [], errors } : { placed, errors };
}

/** Directories holding objects, and every directory between them and `namespaces/`. */
function buildTree<T extends { readonly manifest: Manifest }>(entries: readonly T[]): Node<T> | undefined {
  const nodes = new Map<string, Node<T>>();
  const nodeFor = (dir: string): Node<T> => {
    const found = nodes.get(dir);
    if (found) return found;
    const node: Node<T> = { dir, entries: [], children: [] };
    nodes.set(dir, node);
    const parent = dirOf(dir);
    if (dir !== TopDir.Namespaces && parent !== "") nodeFor(parent).children.push(node);
    return node;
  };
  for (const entry of entries) nodeFor(dirOf(entry.manifest.sourcePath)).entries.push(entry);
  for (const node of nodes.values()) node.children.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
  return nodes.get(TopDir.Namespaces);
}

/**
 * One Namespace per directory; below an abstract directory with objects, at least one namespace.
 * Returns whether the node is or holds a namespace directory.
 */
function checkNamespaces<T extends { readonly manifest: Manifest }>(
  node: Node<T> | undefined,
  errors: SourceError[],
): boolean {
  if (node === undefined) return false;
  const namespaces = node.entries.filter((e) => isNamespace(e.manifest)).map((e) => e.manifest);
  if (namespaces.length > 1) {
    errors.push(
      new MultipleSingletonsError(
        `${node.dir}/: declares ${namespaces.length} Namespaces (${namespaces.map((n) => `"${n.metadata.name}" in ${n.sourcePath}`).join(", ")}); a directory declares at most one`,
        { resources: namespaces.map(manifestResource) },
      ),
    );
  }
  if (namespaces.length > 0) return true;
  let below = false;
  for (const child of node.children) below = checkNamespaces(child, errors) || below;
  if (node.entries.length > 0 && !below) {
    const message =
      node.children.length === 0
        ? `${node.dir}/: holds objects but no Namespace; a directory without subdirectories must declare the Namespace named after it`
        : `${node.dir}/: is an abstract namespace holding objects, but no directory below it declares a Namespace to inherit them`;
    errors.push(new UnsyncableResourcesError(message, { sourcePaths: [node.dir] }));
  }
  return below;
}

/** A NamespaceSelector selects among the namespaces below it, so it may not sit in a namespace directory. */
function checkSelectors<T extends { readonly manifest: Manifest }>(
  root: Node<T> | undefined,
  selectors: readonly Manifest[],
  errors: SourceError[],
): void {
  if (root === undefined || selectors.length === 0) return;
  const namespaceDirs = new Set<string>();
  const collect = (node: Node<T>): void => {
    if (node.entries.some((e) => isNamespace(e.manifest))) namespaceDirs.add(node.dir);
    node.children.forEach(collect);
  };
  collect(root);
  for (const selector of selectors) {
    if (namespaceDirs.has(dirOf(selector.sourcePath))) {
      errors.push(
        new IllegalKindInNamespacesError(
          `${what(selector)}: a NamespaceSelector may not be declared in a namespace directory; move it to an abstract namespace directory above the namespaces it selects`,
          { resources: [manifestResource(selector)] },
        ),
      );
    }
  }
}
