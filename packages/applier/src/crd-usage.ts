import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import { describeId, idKey, type ObjectId } from "./object-id.ts";

/** Custom resources of a CRD that its deletion would take although this prune did not remove them. */
export interface CustomResourcesLeft {
  readonly count: number;
  /** The first few, for the message. */
  readonly examples: readonly ObjectId[];
}

interface CrdShape {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly version: string | undefined;
}

/** What a live CRD says about the resources it serves; `version` is the storage one if served, else any served. */
function shapeOf(crd: KubeObject): CrdShape {
  const spec = (crd["spec"] ?? {}) as {
    group?: string;
    scope?: string;
    names?: { kind?: string; plural?: string };
    versions?: { name?: string; served?: boolean; storage?: boolean }[];
  };
  const served = (spec.versions ?? []).filter((v) => v.served === true && typeof v.name === "string");
  const version = (served.find((v) => v.storage === true) ?? served[0])?.name;
  return {
    group: spec.group ?? "",
    kind: spec.names?.kind ?? "",
    plural: spec.names?.plural ?? "",
    namespaced: spec.scope !== "Cluster",
    version,
  };
}

/**
 * Lists every custom resource of `crd` (all namespaces; one served version reads them all, whatever
 * version each is stored in) and counts those neither in `removed` (what this prune deleted or found
 * gone) nor already being deleted: deleting the CRD would delete them. A list that fails throws, and a
 * CRD that serves no version cannot be listed: an unknown is never "nothing left".
 */
export async function customResourcesLeft(
  client: KubeClient,
  crd: KubeObject,
  removed: ReadonlySet<string>,
): Promise<CustomResourcesLeft> {
  const shape = shapeOf(crd);
  if (shape.version === undefined || shape.plural === "" || shape.kind === "")
    throw new Error(`CustomResourceDefinition ${crd.metadata.name} serves no version to list its custom resources`);
  const mapping: ResourceMapping = {
    group: shape.group,
    version: shape.version,
    kind: shape.kind,
    resource: shape.plural,
    namespaced: shape.namespaced,
    verbs: ["list"],
  };
  let count = 0;
  const examples: ObjectId[] = [];
  for await (const page of client.listPages(mapping)) {
    if (page.restart) {
      count = 0;
      examples.length = 0;
    }
    for (const item of page.items) {
      // Already going, whoever deletes it: deleting the CRD takes nothing that would have stayed.
      if (item.metadata.deletionTimestamp !== undefined) continue;
      const id = {
        group: shape.group,
        kind: shape.kind,
        namespace: shape.namespaced ? (item.metadata.namespace ?? "") : "",
        name: item.metadata.name,
      };
      if (removed.has(idKey(id))) continue;
      count++;
      if (examples.length < 3) examples.push(id);
    }
  }
  return { count, examples };
}

function describeLeft(left: CustomResourcesLeft): string {
  const names = left.examples.map((id) => (id.namespace === "" ? id.name : `${id.namespace}/${id.name}`));
  return `${left.count} custom resource(s) that stay (${names.join(", ")}${left.count > names.length ? ", ..." : ""})`;
}

/**
 * A CRD left the source while custom resources of it that this prune did not remove still exist (another
 * sync's, a user's, a detached one): deleting it would delete them, so it is kept and retried each pass.
 */
export class CrdInUseError extends DriftlessError {
  constructor(id: ObjectId, left: CustomResourcesLeft) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      message: `skipped delete of ${describeId(id)}: CustomResourceDefinition still in use by ${describeLeft(left)}, which deleting it would delete`,
    });
  }
}
