/**
 * The render step of a pass: a sync directory with a kustomization is built by kustomize once per
 * commit (and shell setting), and the source is read from its output; any other directory is read as
 * it is. Config Sync's status.rendering messages say which happened.
 */
import { InvalidSyncError, Kind, type DriftlessError, type RSync } from "@driftless/api";
import type { FetchResult } from "@driftless/git";
import type { KustomizeBuildReport } from "@driftless/metrics";
import { kustomizeUsage } from "./kustomize-usage.ts";
import {
  kustomizationBelow,
  kustomizationMissingError,
  needsRendering,
  removeRendered,
  renderKustomization,
  RenderingError,
  RenderingMessage,
  type RenderOptions,
  type RenderTools,
} from "./render.ts";
import { countRenderedObjects } from "./rendered-objects.ts";

/** Renders `dir` into a new folder of output files: kustomize here, or the pod's render container. */
export type Renderer = (dir: string, options: RenderOptions) => Promise<string>;

export interface RenderCacheOptions {
  readonly tools: RenderTools;
  /** Default: kustomize as a child of this process (process mode). */
  readonly renderer?: Renderer;
  /**
   * Whether spec.override.enableShellInRendering is honoured. A RootSync is admin-owned; a RepoSync
   * only when the manager allows it (--allow-reposync-shell-in-rendering), which it also checks first.
   */
  readonly shellAllowed: boolean;
}

export interface Rendered {
  /** What the source step reads; undefined when rendering failed (the pass stops). */
  readonly source: FetchResult | undefined;
  readonly rendering: { readonly message: RenderingMessage; readonly errors: readonly DriftlessError[] };
  /** Set when this call ran a build (not a commit built before): Config Sync's kustomize metrics. */
  readonly build?: KustomizeBuildReport;
}

interface Last {
  readonly key: string;
  readonly out: string;
}

export class RenderCache {
  readonly #tools: RenderTools;
  readonly #renderer: Renderer;
  readonly #shellAllowed: boolean;
  #last: Last | undefined;
  #walked: { readonly key: string; readonly below: string | undefined } | undefined;

  constructor(options: RenderCacheOptions) {
    this.#tools = options.tools;
    this.#renderer = options.renderer ?? renderKustomization;
    this.#shellAllowed = options.shellAllowed;
  }

  async render(fetched: FetchResult, sync: RSync, signal: AbortSignal): Promise<Rendered> {
    if (!(await needsRendering(fetched.sourceDir))) {
      await this.clear();
      const below = await this.#kustomizationBelow(fetched);
      if (below !== undefined)
        return {
          source: undefined,
          rendering: {
            message: RenderingMessage.Failed,
            errors: [kustomizationMissingError(fetched.sourceDir, below)],
          },
        };
      return { source: fetched, rendering: { message: RenderingMessage.Skipped, errors: [] } };
    }
    const enableShell = sync.spec.override?.enableShellInRendering === true;
    if (enableShell && !this.#shellAllowed) {
      await this.clear();
      return { source: undefined, rendering: { message: RenderingMessage.Failed, errors: [shellRefused(sync)] } };
    }
    const key = JSON.stringify([fetched.commit, fetched.sourceDir, enableShell]);
    if (this.#last?.key === key)
      return {
        source: { ...fetched, sourceDir: this.#last.out },
        rendering: { message: RenderingMessage.Succeeded, errors: [] },
      };
    await this.clear();
    // Read beside the build, from the reconciler's checkout (in a pod the build runs elsewhere).
    const usage = kustomizeUsage(fetched.sourceDir, fetched.dir).catch(() => undefined);
    const started = performance.now();
    try {
      const out = await this.#renderer(fetched.sourceDir, {
        tools: this.#tools,
        repositoryRoot: fetched.dir,
        enableShell,
        signal,
      });
      const latencyMs = performance.now() - started;
      this.#last = { key, out };
      return {
        source: { ...fetched, sourceDir: out },
        rendering: { message: RenderingMessage.Succeeded, errors: [] },
        build: { latencyMs, resourceCount: await countRenderedObjects(out), usage: await usage },
      };
    } catch (error) {
      const latencyMs = performance.now() - started;
      if (!(error instanceof RenderingError)) throw error;
      // Config Sync records a failed build too: its time, no objects, and the kustomizations' usage.
      return {
        source: undefined,
        rendering: { message: RenderingMessage.Failed, errors: [error] },
        build: { latencyMs, resourceCount: 0, usage: await usage },
      };
    }
  }

  /** Walks a directory without a kustomization once per commit: every resync of a wet source asks. */
  async #kustomizationBelow(fetched: FetchResult): Promise<string | undefined> {
    const key = JSON.stringify([fetched.commit, fetched.sourceDir]);
    if (this.#walked?.key !== key) this.#walked = { key, below: await kustomizationBelow(fetched.sourceDir) };
    return this.#walked.below;
  }

  /** Removes the last render's output (a new commit, a directory without a kustomization, stop). */
  async clear(): Promise<void> {
    const last = this.#last;
    this.#last = undefined;
    if (last !== undefined) await removeRendered(last.out);
  }
}

/** Defence in depth: the manager refuses such a RepoSync before it starts a reconciler for it. */
function shellRefused(sync: RSync): InvalidSyncError {
  const identity = { kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name };
  return new InvalidSyncError(
    identity,
    `spec.override.enableShellInRendering is refused for a ${Kind.RepoSync}: it lets the repository run code while rendering, and this reconciler was not allowed it (the reconciler-manager's --allow-reposync-shell-in-rendering)`,
  );
}
