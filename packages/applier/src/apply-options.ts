import type { KubeClient, RestMapper } from "@driftless/kube";
import type { Annotator, PatchMaker } from "@driftless/objectmatcher";
import type { CustomResourceSchemaLoader } from "./cr-schemas.ts";
import type { DesiredObject, SyncIdentity } from "./desired.ts";
import type { LiveState } from "./live-state.ts";
import type { VerifiedMatches } from "./verified-matches.ts";

export interface ApplyOptions {
  readonly client: KubeClient;
  readonly mapper: RestMapper;
  readonly live: LiveState;
  readonly sync: SyncIdentity;
  /** The commit being applied, recorded in the token annotation of every object written. */
  readonly commit: string;
  readonly annotator: Annotator;
  readonly matcher: PatchMaker;
  /**
   * Keeps custom resources' schemas current in the matcher's registry (cr-schemas.ts): read before a
   * live object is matched (never for a create), confirmed before one is written, and handed each CRD
   * this plan applies once it is Established.
   */
  readonly schemas?: Pick<CustomResourceSchemaLoader, "ensure" | "confirm" | "observe">;
  /** Requests in flight within a wave. */
  readonly concurrency?: number;
  readonly fieldManager?: string;
  /** How long to wait for a CRD to become Established before applying its custom resources. */
  readonly crdEstablishTimeoutMs?: number;
  /**
   * How long an object named in another's `depends-on` may take to become Current before its
   * dependents are skipped for this pass (Config Sync's override.reconcileTimeout; default 5 min).
   */
  readonly reconcileTimeoutMs?: number;
  /** How often a dependency's health is read from the live state while waiting (default 250 ms). */
  readonly dependencyPollMs?: number;
  /** Ends waits early (the reconciler stopping): for dependencies (their dependents are skipped) and new CRDs. */
  readonly signal?: AbortSignal;
  /**
   * Once aborted, no further wave starts: the caller no longer wants this plan applied (the sync's spec
   * changed). The waves not started have no outcome.
   */
  readonly halt?: AbortSignal;
  /** Matches already found equal, kept across passes by the caller (see {@link VerifiedMatches}). */
  readonly verified?: VerifiedMatches;
  /**
   * The declaration the previous pass applied for an object, if the caller knows it: when the live
   * state keeps record digests (record-digest.ts), it restores the record of an object whose
   * declaration this commit changed without a GET.
   */
  readonly previousDeclaration?: (id: DesiredObject["id"]) => DesiredObject | undefined;
  /**
   * Decide, do not write: the outcome says what a write would do (created, updated) and nothing is
   * sent. A suspended sync reports its drift this way.
   */
  readonly dryRun?: boolean;
  /** Told what needs an operator's eye but fails nothing (a write the API server kept nothing of). */
  readonly log?: { warn(message: string, fields?: Readonly<Record<string, unknown>>): void };
}
