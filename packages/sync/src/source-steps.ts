import { join } from "node:path";
import { DriftlessError, ErrorClass, KnvCode, type RSync } from "@driftless/api";
import type { FetchResult } from "@driftless/git";
import type { KubeClient, RestMapper } from "@driftless/kube";
import type { Metrics } from "@driftless/metrics";
import { splitApiVersion, type SourceResult } from "@driftless/source";
import { ArtifactSources } from "./artifact-sources.ts";
import type { Logger } from "./log.ts";
import type { NamespaceWatch } from "./namespace-watch.ts";
import type { PassTrigger } from "./pass.ts";
import type { ReconcilerOptions } from "./reconciler-options.ts";
import { renderThroughServer } from "./render-client.ts";
import { awaitRenderContainer, noteRequiresRendering } from "./render-container-gate.ts";
import { RenderCache, type Rendered } from "./rendering.ts";
import { SourceCache } from "./source-cache.ts";
import { withSourceFormatHint } from "./source-format-hint.ts";
import { sourceFormatOf } from "./source-options.ts";
import type { SecretWatch } from "./secret-watch.ts";
import type { ValuesFileWatch } from "./values-file-watch.ts";

export interface SourceStepsDeps {
  readonly client: KubeClient;
  readonly mapper: RestMapper;
  readonly namespaceWatch: NamespaceWatch;
  readonly valuesWatch: ValuesFileWatch;
  readonly secretWatch: SecretWatch;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** The reconciler's stop: cuts a fetch, render or read short. */
  readonly signal: AbortSignal;
}

const scopeCodes: ReadonlySet<string> = new Set([KnvCode.IllegalNamespaceOnClusterScoped, KnvCode.BadScope]);

/** A pass's source steps (fetch an OCI or Helm artifact, render, read) and the caches they keep between passes. */
export class SourceSteps {
  /** The last checkout's declaration, reused while nothing it depends on changed. */
  private sourceCache: SourceCache | undefined;
  private renderCache: RenderCache | undefined;
  /** OCI and Helm sources, made on the first pass that reads one. */
  private artifacts: ArtifactSources | undefined;
  private readonly options: ReconcilerOptions;
  private readonly deps: SourceStepsDeps;

  constructor(options: ReconcilerOptions, deps: SourceStepsDeps) {
    this.options = options;
    this.deps = deps;
  }

  /** The last source read has a dynamic NamespaceSelector. */
  get dynamicNamespaces(): boolean {
    return this.sourceCache?.dynamicNamespaces === true;
  }

  fetchArtifact(sync: RSync, trigger: PassTrigger, signal: AbortSignal): Promise<FetchResult> {
    this.artifacts ??= new ArtifactSources({
      cacheDir: join(this.options.cacheDir, "artifacts"),
      toolsDir: this.options.renderToolsDir,
      shellAllowed: this.shellAllowed(),
      valuesFiles: this.deps.valuesWatch,
      secrets: this.deps.secretWatch,
    });
    return this.artifacts.fetch(this.deps.client, sync, trigger === "drift", signal);
  }

  async render(fetched: FetchResult, sync: RSync): Promise<Rendered> {
    const socketPath = this.options.renderSocket;
    const gate = { client: this.deps.client, identity: this.options.identity, log: this.deps.log };
    if (socketPath !== undefined) {
      const waiting = await awaitRenderContainer({ ...gate, socketPath }, fetched, sync);
      if (waiting !== undefined) return waiting;
    } else {
      await noteRequiresRendering(gate, fetched, sync);
    }
    this.renderCache ??= this.newRenderCache();
    const rendered = await this.renderCache.render(fetched, sync, this.deps.signal);
    if (rendered.build !== undefined) this.deps.metrics.recordKustomizeBuild(rendered.build);
    return rendered;
  }

  private newRenderCache(): RenderCache {
    const socketPath = this.options.renderSocket;
    const renderer = this.options.renderer ?? (socketPath === undefined ? undefined : renderThroughServer(socketPath));
    return new RenderCache({
      tools: { dir: this.options.renderToolsDir },
      ...(renderer === undefined ? {} : { renderer }),
      shellAllowed: this.shellAllowed(),
    });
  }

  /** A RootSync is admin-owned; a RepoSync's shell runs a tenant's code, so only when the manager allows it. */
  private shellAllowed(): boolean {
    return this.options.identity.kind === "RootSync" || this.options.allowRepoSyncShellInRendering === true;
  }

  async readSource(fetched: FetchResult, sync: RSync): Promise<SourceResult> {
    const identity = this.options.identity;
    this.sourceCache ??= new SourceCache(
      identity.kind === "RootSync" ? { kind: "RootSync" } : { kind: "RepoSync", namespace: identity.namespace },
      {
        resolveKind: async (apiVersion, kind) => {
          const mapping = await this.deps.mapper.mappingFor(apiVersion, kind);
          if (mapping === undefined) {
            // Unknown only if discovery said so: a group whose discovery failed is the API server's error.
            await this.#refuseUnreadableKind(apiVersion, kind);
            return undefined;
          }
          return {
            group: mapping.group,
            version: mapping.version,
            resource: mapping.resource,
            namespaced: mapping.namespaced,
          };
        },
      },
      {
        ...(this.options.clusterName === undefined ? {} : { clusterName: this.options.clusterName }),
        listNamespaces: () => this.deps.namespaceWatch.list(),
      },
    );
    const result = await this.sourceCache.read(fetched, sourceFormatOf(sync), this.deps.signal);
    // A scope error may come from discovery read while a CRD was being replaced by one of another scope:
    // the next pass asks discovery again rather than keep that answer until a restart.
    if (result.errors.some((e) => scopeCodes.has(e.code))) this.deps.mapper.invalidate();
    // A dynamic selector gone from the source: its Namespace watch goes too (one watch per managed type).
    if (this.sourceCache.staticNamespaces && this.deps.namespaceWatch.watching) await this.deps.namespaceWatch.stop();
    return withSourceFormatHint(sync, result);
  }

  /** KNV2002 (retried) for a kind whose group's discovery failed: Config Sync reports "API discovery failed". */
  async #refuseUnreadableKind(apiVersion: string, kind: string): Promise<void> {
    const parsed = splitApiVersion(apiVersion);
    if (parsed === undefined) return;
    const absence = await this.deps.mapper.kindAbsence(parsed.group, kind);
    if (absence.served !== "unknown") return;
    throw new DriftlessError({
      code: KnvCode.ApiServer,
      errorClass: ErrorClass.Retry,
      message: `API discovery failed for ${apiVersion}, Kind=${kind}, so whether the cluster serves it is unknown: ${absence.why}`,
    });
  }

  async clear(): Promise<void> {
    await this.renderCache?.clear();
  }
}
