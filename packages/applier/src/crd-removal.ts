import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import type { KubeClient } from "@driftless/kube";
import { declaredResource, type DesiredObject } from "./desired.ts";
import { idKey, type ObjectId } from "./object-id.ts";
import { crdMapping } from "./wait.ts";

/**
 * A commit removes a CRD this sync manages but still declares custom resources of it (Config Sync's
 * KNV1047): pruning the CRD would delete them right after applying them. The commit is refused.
 */
export class UnsupportedCrdRemovalError extends DriftlessError {
  constructor(crd: ObjectId, object: DesiredObject) {
    super({
      code: KnvCode.UnsupportedCrdRemoval,
      errorClass: ErrorClass.Terminal,
      message: `${object.sourcePath} declares ${object.id.kind} ${named(object.id)}, a custom resource of CustomResourceDefinition ${crd.name}, which this commit removes; remove the custom resources in the same commit as their CRD, or declare the CRD again`,
      resources: [declaredResource(object)],
    });
  }
}

const named = (id: ObjectId): string => (id.namespace ? `${id.namespace}/${id.name}` : id.name);

function isCrd(id: ObjectId): boolean {
  return id.kind === "CustomResourceDefinition" && id.group === "apiextensions.k8s.io";
}

/**
 * KNV1047 for each declaration whose type is a CRD the inventory holds (`previous`) and the source no
 * longer declares. Only a CRD leaving the source costs a read (its live group and kind); one already gone
 * protects nothing.
 */
export async function crdRemovalErrors(
  client: KubeClient,
  previous: readonly ObjectId[],
  desired: readonly DesiredObject[],
): Promise<UnsupportedCrdRemovalError[]> {
  const declared = new Set(desired.map((d) => idKey(d.id)));
  const removed = previous.filter((id) => isCrd(id) && !declared.has(idKey(id)));
  const errors: UnsupportedCrdRemovalError[] = [];
  for (const crd of removed) {
    const live = await client.get(crdMapping, undefined, crd.name);
    const spec = (live?.["spec"] ?? {}) as { group?: string; names?: { kind?: string } };
    if (spec.group === undefined || spec.names?.kind === undefined) continue;
    const kind = spec.names.kind;
    for (const object of desired)
      if (object.id.group === spec.group && object.id.kind === kind)
        errors.push(new UnsupportedCrdRemovalError(crd, object));
  }
  return errors;
}
