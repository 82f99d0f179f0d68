/**
 * `spec.override.namespaceStrategy: implicit` (a RootSync's default), as Config Sync does it: a
 * Namespace that declared objects use but the source does not declare is declared too, marked
 * `client.lifecycle.config.k8s.io/deletion: detach` so that it is never pruned. One that already
 * exists is taken only if this sync already manages it: another sync's, or one created by hand, is
 * left alone (several RootSyncs using one namespace would otherwise fight over it). `explicit`
 * declares nothing: objects in a namespace nobody created fail to apply (KNV2009, namespace not found).
 */
import { ManagedAnnotation, managerAnnotationValue, type RSync } from "@driftless/api";
import type { SyncIdentity } from "@driftless/applier";
import { namespaceMapping, type KubeClient } from "@driftless/kube";
import { implicitNamespace, implicitNamespaces, type DeclaredObject } from "@driftless/source";
import { createsImplicitNamespaces } from "./source-options.ts";

// One declaration per name, so a resync hands the applier the same object (its desired form is cached by identity).
const declarations = new Map<string, DeclaredObject>();

/** The source's objects plus the implicit Namespaces this sync declares; one GET per candidate namespace. */
export async function withImplicitNamespaces(
  client: KubeClient,
  identity: SyncIdentity,
  sync: RSync,
  objects: readonly DeclaredObject[],
): Promise<readonly DeclaredObject[]> {
  if (!createsImplicitNamespaces(sync)) return objects;
  const names = implicitNamespaces(objects);
  if (names.length === 0) return objects;
  const ours = managerAnnotationValue(identity.kind, identity.namespace, identity.name);
  const added: DeclaredObject[] = [];
  for (const name of names) {
    const live = await client.get(namespaceMapping, undefined, name);
    if (live !== undefined && live.metadata.annotations?.[ManagedAnnotation.Manager] !== ours) continue;
    let declared = declarations.get(name);
    if (declared === undefined) {
      declared = implicitNamespace(name);
      declarations.set(name, declared);
    }
    added.push(declared);
  }
  return added.length === 0 ? objects : [...objects, ...added];
}
