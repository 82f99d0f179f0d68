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
}

/** Which sync is applying: decides the manager annotation and the inventory id. */
export interface SyncIdentity {
  readonly kind: "RootSync" | "RepoSync";
  readonly namespace: string;
  readonly name: string;
}
