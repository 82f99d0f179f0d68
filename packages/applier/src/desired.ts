import type { ErrorResource } from "@driftless/api";
import { sameDeclaringSource, type DeclaringSource } from "./declaring-source.ts";
import type { ObjectId } from "./object-id.ts";

/** A plain JSON object as parsed from the source or returned by the API server. */
export type JsonObject = { [key: string]: unknown };

/** An object as declared in Git, ready to apply. The reconciler builds these from the parsed source. */
export interface DesiredObject {
  readonly id: ObjectId;
  readonly apiVersion: string;
  /** The declared object (namespace defaulted), without any driftless metadata. */
  readonly object: JsonObject;
  /** Path of the declaring file relative to the sync's dir. */
  readonly sourcePath: string;
  /** Hash of the declared content, reported in the ResourceGroup. */
  readonly sourceHash: string;
  /** Parsed `config.kubernetes.io/depends-on` references. */
  readonly dependsOn: readonly ObjectId[];
  /** The sync's source (directory, git context), for the metadata Config Sync writes from it. */
  readonly source?: DeclaringSource;
}

/** What an error about `desired` names in `errorResources[]`: its id, declared version and file, as Config Sync does. */
export function declaredResource(desired: DesiredObject): ErrorResource {
  const slash = desired.apiVersion.indexOf("/");
  return { ...desired.id, version: desired.apiVersion.slice(slash + 1), sourcePath: desired.sourcePath };
}

/** The fields of a parsed source object (@driftless/source's DeclaredObject) that applying needs. */
export interface DeclaredInput {
  readonly id: { readonly group: string; readonly kind: string; readonly namespace?: string; readonly name: string };
  readonly apiVersion: string;
  readonly raw: JsonObject;
  readonly sourcePath: string;
  readonly sourceHash: string;
  readonly dependsOn: readonly {
    readonly group: string;
    readonly kind: string;
    readonly namespace?: string;
    readonly name: string;
  }[];
}

// A source read once per commit (see @driftless/sync's SourceCache) gives the same declared objects
// on every pass; mapping each once keeps the DesiredObjects stable, so a resync allocates no new ones.
const desiredOf = new WeakMap<DeclaredInput, DesiredObject>();

/**
 * A source object as the applier takes it; cluster-scoped objects get the "" namespace. The same
 * object from the same source gives the same DesiredObject; a new directory or git context (the
 * RSync's spec changed) gives a new one.
 */
export function toDesired(object: DeclaredInput, source?: DeclaringSource): DesiredObject {
  let desired = desiredOf.get(object);
  if (desired === undefined || !sameDeclaringSource(desired.source, source)) {
    desired = mapDeclared(object, source);
    desiredOf.set(object, desired);
  }
  return desired;
}

function mapDeclared(object: DeclaredInput, source: DeclaringSource | undefined): DesiredObject {
  const id = (ref: DeclaredInput["id"]): ObjectId => ({
    group: ref.group,
    kind: ref.kind,
    namespace: ref.namespace ?? "",
    name: ref.name,
  });
  return {
    id: id(object.id),
    apiVersion: object.apiVersion,
    object: object.raw,
    sourcePath: object.sourcePath,
    sourceHash: object.sourceHash,
    dependsOn: object.dependsOn.map(id),
    ...(source === undefined ? {} : { source }),
  };
}

/** Which sync is applying: decides the manager annotation and the inventory id. */
export interface SyncIdentity {
  readonly kind: "RootSync" | "RepoSync";
  readonly namespace: string;
  readonly name: string;
}
