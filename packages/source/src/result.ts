/**
 * What reading a source produces. The shape makes the dangerous mistake impossible: only a
 * `CompleteSource` has `objects`, so a source that failed to read can never be mistaken for one that
 * declares nothing, and pruning everything.
 */
import type { SourceError } from "./errors.ts";
import type { JsonObject } from "./json.ts";
import { hierarchyKindOf } from "./hierarchy-layout.ts";
import type { Manifest, ManifestMetadata } from "./manifest.ts";
import type { ObjectId } from "./object-id.ts";

/** The output of the first step: every manifest that is valid on its own, and every problem found. */
export interface ManifestSet {
  readonly manifests: readonly Manifest[];
  /**
   * `manifests` and, in reading order among them, the objects that failed a check of their own but
   * whose kind is known (their errors are in `errors`). Only the checks that look across objects read
   * these (directories, the Repo, illegal kinds, selectors), so one pass reports every error, as Config
   * Sync's do; nothing in it beyond `manifests` is ever declared.
   */
  readonly identified: readonly Manifest[];
  readonly errors: readonly SourceError[];
  /** Manifest files read (.yaml, .yml, .json). */
  readonly fileCount: number;
  /** Objects dropped because of `config.kubernetes.io/local-config`. */
  readonly localConfigSkipped: number;
}

/** An object the sync declares, placed in its namespace and ready to apply. */
export interface DeclaredObject extends Manifest {
  /** metadata with the namespace the object lands in (absent for cluster-scoped objects). */
  readonly metadata: ManifestMetadata;
  /** The object as parsed, with metadata.namespace filled in where it was defaulted. */
  readonly raw: JsonObject;
  readonly id: ObjectId;
  /**
   * First 16 hex characters of the SHA-256 of the object's canonical JSON, as applied (namespace
   * included): changes exactly when the declared object does. (Config Sync's ResourceGroup
   * `sourceHash` is the commit prefix instead; see @driftless/api `sourceHash`.)
   */
  readonly sourceHash: string;
  /** Plural resource name, from discovery or a CRD in the source. */
  readonly resource: string;
  readonly namespaced: boolean;
}

interface SourceCounts {
  readonly fileCount: number;
  readonly localConfigSkipped: number;
}

/**
 * What toSourceResult needs beside the objects: the counts, and whether the files held any object to declare
 * before selection. A source whose selectors select nothing is not empty: the user chose that deletion.
 */
export interface SourceShape extends SourceCounts {
  readonly declaresSomething: boolean;
  /** The namespaces of the objects read, flawed ones with a known kind included (see FailedSource). */
  readonly namespaces: readonly string[];
}

/** Every manifest read and validated: safe to apply and to prune against. */
export interface CompleteSource extends SourceCounts {
  readonly complete: true;
  readonly objects: readonly DeclaredObject[];
  /**
   * The files declare nothing (none, or only local-config objects and Config Sync's own configuration kinds);
   * objects that selectors leave out still count. Still complete; whether pruning everything is acceptable is
   * the applier's call (driftless refuses: KNV2006).
   */
  readonly isEmpty: boolean;
  readonly errors: readonly [];
  /**
   * Objects left out because no one defines their kind (KNV1021, with `setAsideUnknownKinds`): the rest is
   * declared; these are reported, and nothing of their kinds is pruned while they are set aside.
   */
  readonly setAside: readonly SourceError[];
}

/** At least one problem: nothing may be applied or pruned from this read. */
export interface FailedSource extends SourceCounts {
  readonly complete: false;
  readonly isEmpty: false;
  readonly errors: readonly [SourceError, ...SourceError[]];
  /**
   * Objects that did read and validate, for diagnostics (`driftless vet`, diff). Not the source:
   * anything missing here may simply have failed to parse.
   */
  readonly partialObjects: readonly DeclaredObject[];
  /**
   * The namespaces of every object read, flawed ones with a known kind included: kustomize names the files of
   * a rendered source after them, and its errors name those files.
   */
  readonly namespaces?: readonly string[];
}

export type SourceResult = CompleteSource | FailedSource;

export function toSourceResult(
  objects: readonly DeclaredObject[],
  errors: readonly SourceError[],
  shape: SourceShape,
  setAside: readonly SourceError[] = [],
): SourceResult {
  const { fileCount, localConfigSkipped } = shape;
  const [first, ...rest] = errors.length > 0 ? [...errors, ...setAside] : errors;
  if (first)
    return {
      complete: false,
      isEmpty: false,
      errors: [first, ...rest],
      partialObjects: objects,
      namespaces: shape.namespaces,
      fileCount,
      localConfigSkipped,
    };
  const isEmpty = objects.length === 0 && !shape.declaresSomething;
  return { complete: true, objects, isEmpty, errors: [], setAside, fileCount, localConfigSkipped };
}

/** The shape of a read: its counts, and whether any manifest is more than Config Sync's own configuration kinds. */
export function shapeOf(set: ManifestSet): SourceShape {
  return {
    fileCount: set.fileCount,
    localConfigSkipped: set.localConfigSkipped,
    declaresSomething: set.manifests.some((manifest) => hierarchyKindOf(manifest) === undefined),
    namespaces: [...new Set(set.identified.flatMap((manifest) => manifest.metadata.namespace || []))],
  };
}
