/**
 * The render step of a pass: a sync directory with a kustomization is built by kustomize once per
 * commit (and shell setting), and the source is read from its output; any other directory is read as
 * it is. Config Sync's status.rendering messages say which happened.
 */
import { type DriftlessError, type RSync } from "@driftless/api";
import type { FetchResult } from "@driftless/git";
import {
  needsRendering,
  removeRendered,
  renderKustomization,
  RenderingError,
  RenderingMessage,
  type RenderTools,
} from "./render.ts";

export interface Rendered {
  /** What the source step reads; undefined when rendering failed (the pass stops). */
  readonly source: FetchResult | undefined;
  readonly rendering: { readonly message: RenderingMessage; readonly errors: readonly DriftlessError[] };
}

interface Last {
  readonly key: string;
  readonly out: string;
}

export class RenderCache {
  readonly #tools: RenderTools;
  #last: Last | undefined;

  constructor(tools: RenderTools) {
    this.#tools = tools;
  }

  async render(fetched: FetchResult, sync: RSync, signal: AbortSignal): Promise<Rendered> {
    if (!(await needsRendering(fetched.sourceDir))) {
      await this.clear();
      return { source: fetched, rendering: { message: RenderingMessage.Skipped, errors: [] } };
    }
    const enableShell = sync.spec.override?.enableShellInRendering === true;
    const key = JSON.stringify([fetched.commit, fetched.sourceDir, enableShell]);
    if (this.#last?.key !== key) {
      await this.clear();
      try {
        const out = await renderKustomization(fetched.sourceDir, {
          tools: this.#tools,
          repositoryRoot: fetched.dir,
          enableShell,
          signal,
        });
        this.#last = { key, out };
      } catch (error) {
        if (!(error instanceof RenderingError)) throw error;
        return { source: undefined, rendering: { message: RenderingMessage.Failed, errors: [error] } };
      }
    }
    return {
      source: { ...fetched, sourceDir: this.#last.out },
      rendering: { message: RenderingMessage.Succeeded, errors: [] },
    };
  }

  /** Removes the last render's output (a new commit, a directory without a kustomization, stop). */
  async clear(): Promise<void> {
    const last = this.#last;
    this.#last = undefined;
    if (last !== undefined) await removeRendered(last.out);
  }
}
