/**
 * `namespaceStrategy: implicit` (a RootSync's default): a Namespace that declared objects use but
 * the source does not declare is declared by the reconciler, as Config Sync does, with
 * `client.lifecycle.config.k8s.io/deletion: detach` so that removing the objects later never deletes
 * it (it may hold objects nobody declared). Whether one that already exists is taken over is the
 * reconciler's call (Config Sync: only if it does not exist or this sync already manages it).
 */
import { isSpecialNamespace, RootSyncNamespace, UserAnnotation } from "@driftless/api";
import { declareObject } from "./declare-object.ts";
import type { DeclaredObject } from "./result.ts";

const namespaceKind = { group: "", version: "v1", resource: "namespaces", namespaced: false } as const;

/**
 * Namespaces used by declared objects and not declared, in order of first use. Never the RootSyncs'
 * own namespace: several RootSyncs declaring objects there would otherwise fight over it.
 */
export function implicitNamespaces(objects: readonly DeclaredObject[]): string[] {
  const declared = new Set<string>();
  for (const object of objects) if (object.group === "" && object.kind === "Namespace") declared.add(object.id.name);
  const used = new Set<string>();
  for (const { id } of objects) {
    if (id.namespace !== "" && id.namespace !== RootSyncNamespace && !declared.has(id.namespace))
      used.add(id.namespace);
  }
  return [...used];
}

/** The Namespace declared for an implicit namespace (no file declares it, so its source path is ""). */
export function implicitNamespace(name: string): DeclaredObject {
  const annotations = { [UserAnnotation.LifecycleDeletion]: "detach" };
  const metadata = { name, annotations };
  return declareObject(
    {
      apiVersion: "v1",
      kind: "Namespace",
      group: "",
      version: "v1",
      metadata,
      raw: { apiVersion: "v1", kind: "Namespace", metadata: { name, annotations: { ...annotations } } },
      sourcePath: "",
      dependsOn: [],
    },
    namespaceKind,
    "",
  );
}

// One declaration per declared object, so a resync hands the applier the same object.
const detachedSpecial = new WeakMap<DeclaredObject, DeclaredObject>();

/**
 * The source's objects with each declared special Namespace (default, kube-system, kube-public,
 * kube-node-lease, gatekeeper-system) carrying `client.lifecycle.config.k8s.io/deletion: detach`,
 * as Config Sync applies them: removing one from Git releases it instead of deleting a namespace the
 * cluster cannot do without.
 */
export function withSpecialNamespacesDetached(objects: readonly DeclaredObject[]): readonly DeclaredObject[] {
  if (!objects.some(isUndetachedSpecialNamespace)) return objects;
  return objects.map((object) => {
    if (!isUndetachedSpecialNamespace(object)) return object;
    let detached = detachedSpecial.get(object);
    if (detached === undefined) {
      const annotations = { ...object.metadata.annotations, [UserAnnotation.LifecycleDeletion]: "detach" };
      const rawMetadata = (object.raw["metadata"] ?? {}) as Record<string, unknown>;
      detached = declareObject(
        {
          ...object,
          metadata: { ...object.metadata, annotations },
          raw: { ...object.raw, metadata: { ...rawMetadata, annotations } },
        },
        namespaceKind,
        "",
      );
      detachedSpecial.set(object, detached);
    }
    return detached;
  });
}

function isUndetachedSpecialNamespace(object: DeclaredObject): boolean {
  return (
    object.group === "" &&
    object.kind === "Namespace" &&
    isSpecialNamespace(object.id.name) &&
    object.metadata.annotations?.[UserAnnotation.LifecycleDeletion] !== "detach"
  );
}
