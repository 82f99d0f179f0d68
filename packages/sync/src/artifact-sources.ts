/**
 * The OCI and Helm sources behind the Git fetch's interface: each hands the pass a tree that never
 * changes once returned and a commit (the image digest, the chart version), so rendering, reading,
 * apply, prune and status are the Git path's own.
 */
import { join } from "node:path";
import {
  Defaults,
  DriftlessError,
  ErrorClass,
  InvalidSyncError,
  KnvCode,
  SourceType,
  type HelmRootSyncSpec,
  type RSync,
  type ValuesFileRef,
} from "@driftless/api";
import type { FetchResult } from "@driftless/git";
import { configMapMapping, type KubeClient, type KubeObject } from "@driftless/kube";
import { OciFetcher } from "@driftless/oci";
import { readArtifactCredentials } from "./artifact-credentials.ts";
import { HelmSource } from "./helm-source.ts";
import type { NamedReads } from "./named-watch.ts";

export interface ArtifactSourcesOptions {
  /** This sync's own cache folder. */
  readonly cacheDir: string;
  /** The folder holding helm; undefined: PATH. */
  readonly toolsDir: string | undefined;
  /** Whether spec.override.enableShellInRendering is honoured (RenderCacheOptions.shellAllowed). */
  readonly shellAllowed: boolean;
  /** Told each valuesFileRefs ConfigMap a fetch reads (values-file-watch.ts). */
  readonly valuesFiles?: NamedReads;
  /** Told each Secret a fetch reads (secret-watch.ts). */
  readonly secrets?: NamedReads;
}

export class ArtifactSources {
  readonly #oci: OciFetcher;
  readonly #helm: HelmSource;
  readonly #shellAllowed: boolean;
  readonly #values: NamedReads | undefined;
  readonly #secrets: NamedReads | undefined;
  #last: { readonly spec: string; readonly result: FetchResult } | undefined;

  constructor(options: ArtifactSourcesOptions) {
    this.#oci = new OciFetcher({ cacheDir: join(options.cacheDir, "oci") });
    this.#helm = new HelmSource(join(options.cacheDir, "helm"), options.toolsDir);
    this.#shellAllowed = options.shellAllowed;
    this.#values = options.valuesFiles;
    this.#secrets = options.secrets;
  }

  /**
   * A drift pass re-reads the last tree while the spec (and, as far as the watches saw, its values ConfigMaps
   * and Secrets) is unchanged, without asking the registry.
   */
  async fetch(client: KubeClient, sync: RSync, drift: boolean, signal: AbortSignal): Promise<FetchResult> {
    const type = sync.spec.sourceType ?? Defaults.sourceType;
    const enableShell = this.#shellAllowed && sync.spec.override?.enableShellInRendering === true;
    const spec = JSON.stringify([
      type,
      sync.spec.oci,
      sync.spec.helm,
      enableShell,
      this.#values?.changes ?? 0,
      this.#secrets?.changes ?? 0,
    ]);
    if (drift && this.#last?.spec === spec) return this.#last.result;
    const namespace = sync.metadata.namespace ?? "";
    let result: FetchResult;
    if (type === SourceType.Oci && sync.spec.oci !== undefined) {
      const oci = sync.spec.oci;
      const credentials = await readArtifactCredentials(client, namespace, oci, "spec.oci", this.#secrets);
      result = await this.#oci.fetch({ spec: oci, credentials: credentials.basic, caCert: credentials.caCert, signal });
    } else if (type === SourceType.Helm && sync.spec.helm !== undefined) {
      const helm: HelmRootSyncSpec = sync.spec.helm;
      result = await this.#helm.fetch({
        spec: helm,
        releaseNamespace: sync.kind === "RepoSync" ? namespace : (helm.namespace ?? Defaults.helmReleaseNamespace),
        credentials: await readArtifactCredentials(client, namespace, helm, "spec.helm", this.#secrets),
        valuesFiles: await valuesFiles(client, sync, helm, this.#values),
        enableShell,
        signal,
      });
    } else {
      throw new DriftlessError({
        code: KnvCode.InvalidSync,
        errorClass: ErrorClass.Terminal,
        message: `spec.${type} is required for sourceType ${type}`,
      });
    }
    this.#last = { spec, result };
    return result;
  }
}

/**
 * spec.helm.valuesFileRefs: immutable ConfigMaps in the sync's namespace, as Config Sync requires. Config Sync's
 * manager checks them (KNV1061 on Stalled); driftless's manager reads no ConfigMaps, so its reconciler does, with
 * the same code and words, on status.source.
 */
async function valuesFiles(
  client: KubeClient,
  sync: RSync,
  helm: HelmRootSyncSpec,
  reads: NamedReads | undefined,
): Promise<string[]> {
  const namespace = sync.metadata.namespace ?? "";
  const files: string[] = [];
  for (const ref of helm.valuesFileRefs ?? []) {
    const configMap = await client.get(configMapMapping, namespace, ref.name ?? "");
    reads?.read(ref.name ?? "", configMap);
    files.push(valuesFile(sync, ref, configMap));
  }
  return files;
}

/** The values file `ref` names in `configMap` (undefined: not found), or Config Sync's KNV1061 saying why not. */
export function valuesFile(sync: RSync, ref: ValuesFileRef, configMap: KubeObject | undefined): string {
  const identity = { kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name };
  const name = ref.name ?? "";
  const key = ref.dataKey ?? Defaults.helmValuesFileDataKey;
  const refused = (why: string): InvalidSyncError =>
    new InvalidSyncError(
      identity,
      `${sync.kind}s must reference valid ConfigMaps in spec.helm.valuesFileRefs: ConfigMap ${JSON.stringify(name)} ${why}`,
    );
  if (configMap === undefined) throw refused("not found");
  const where = `in namespace ${JSON.stringify(identity.namespace)}`;
  // Immutable, so values cannot change under an unchanged spec without a new render (Config Sync's rule).
  if (configMap["immutable"] !== true) throw refused(`${where} is not immutable`);
  const value = (configMap["data"] as Record<string, string> | undefined)?.[key];
  if (value === undefined) throw refused(`${where} does not have data key ${JSON.stringify(key)}`);
  return value;
}
