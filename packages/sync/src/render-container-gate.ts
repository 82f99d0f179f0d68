/**
 * Deployment mode: a reconciler pod has its render container (hydration-controller) only while its
 * sync says `configsync.gke.io/requires-rendering: "true"`, as in Config Sync. The reconciler writes
 * that annotation from what each commit holds (in process mode too); the manager reads it and adds or
 * removes the container, which replaces the pod. Until the pod has it, a source that needs rendering
 * waits: nothing is applied.
 */
import { stat } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import {
  DriftlessError,
  ErrorClass,
  KnvCode,
  requiresRendering,
  SyncAnnotation,
  toDriftlessError,
  type RSync,
} from "@driftless/api";
import type { SyncIdentity } from "@driftless/applier";
import type { FetchResult } from "@driftless/git";
import type { KubeClient } from "@driftless/kube";
import type { Logger } from "./log.ts";
import { kustomizationFileIn, RenderingMessage } from "./render.ts";
import type { Rendered } from "./rendering.ts";
import { rsyncMapping } from "./rsync.ts";

/** The source needs rendering and the pod has no render container yet (KNV2016, Config Sync's code for this wait). */
export class RenderContainerMissingError extends DriftlessError {
  constructor(kustomization: string) {
    super({
      code: KnvCode.Transient,
      errorClass: ErrorClass.Retry,
      message: `${kustomization} needs rendering, but this reconciler's pod has no render container (hydration-controller) yet: the sync is annotated ${SyncAnnotation.RequiresRendering}: "true" and the reconciler-manager replaces the pod with one that has it; nothing is applied or pruned until then`,
    });
  }
}

export interface RenderContainerGate {
  /** Where the render container listens; its folder is the pod's render volume, mounted only with it. */
  readonly socketPath: string;
  readonly client: KubeClient;
  readonly identity: SyncIdentity;
  readonly log: Logger;
}

/**
 * Records on the sync whether `fetched` needs rendering and, when it does while the pod has no render
 * container, returns the rendering status to report instead; undefined: render (or read) as usual.
 */
export async function awaitRenderContainer(
  gate: RenderContainerGate,
  fetched: FetchResult,
  sync: RSync,
): Promise<Rendered | undefined> {
  const kustomization = await kustomizationFileIn(fetched.sourceDir);
  const required = kustomization !== undefined;
  const recordError = await recordRequiresRendering(gate, sync, required);
  if (!required || (await renderContainerPresent(gate.socketPath))) {
    // The pass goes on (a wet source needs no container; a present one renders): the next pass writes it again.
    if (recordError !== undefined)
      gate.log.warn("could not record on the sync whether its source needs rendering", {
        required,
        error: recordError.message,
      });
    return undefined;
  }
  const missing = new RenderContainerMissingError(relative(fetched.dir, join(fetched.sourceDir, kustomization)));
  return {
    source: undefined,
    // Without the annotation the manager never adds the container: a failed write is on status too.
    rendering: {
      message: RenderingMessage.Required,
      errors: recordError === undefined ? [missing] : [missing, recordError],
    },
  };
}

/**
 * Process mode: no container to wait for, but the sync still says whether its source needs rendering, as
 * Config Sync's reconciler writes it whatever runs the render (its users and tools read it). Never blocks.
 */
export async function noteRequiresRendering(
  gate: Omit<RenderContainerGate, "socketPath">,
  fetched: FetchResult,
  sync: RSync,
): Promise<void> {
  const required = (await kustomizationFileIn(fetched.sourceDir)) !== undefined;
  const error = await recordRequiresRendering(gate, sync, required);
  if (error !== undefined)
    gate.log.warn("could not record on the sync whether its source needs rendering", {
      required,
      error: error.message,
    });
}

/** Merge-patches the one annotation when it says otherwise (absent counts as "false", as the manager reads it). */
async function recordRequiresRendering(
  gate: Omit<RenderContainerGate, "socketPath">,
  sync: RSync,
  required: boolean,
): Promise<DriftlessError | undefined> {
  if (requiresRendering(sync.metadata.annotations) === required) return undefined;
  const { identity } = gate;
  const patch = { metadata: { annotations: { [SyncAnnotation.RequiresRendering]: String(required) } } };
  try {
    await gate.client.patch(rsyncMapping(identity.kind), identity.namespace, identity.name, patch, "merge");
    gate.log.info("recorded on the sync whether its source needs rendering", {
      annotation: SyncAnnotation.RequiresRendering,
      value: String(required),
    });
    return undefined;
  } catch (error) {
    const cause = toDriftlessError(error, KnvCode.ApiServer);
    return new DriftlessError({
      code: KnvCode.ApiServer,
      errorClass: ErrorClass.Retry,
      message: `could not set the annotation ${SyncAnnotation.RequiresRendering}: "${String(required)}" on ${identity.kind} ${identity.namespace}/${identity.name}, which the reconciler-manager reads to give the pod its render container: ${cause.message}`,
      cause: error,
    });
  }
}

/** The render container's volume is mounted (the socket may not be listening yet: the render then retries). */
async function renderContainerPresent(socketPath: string): Promise<boolean> {
  return stat(dirname(socketPath)).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
