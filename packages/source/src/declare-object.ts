/**
 * Pieces of step two shared by both source formats: resolving kinds (CRDs in the source first, then
 * the resolver), turning one manifest into a DeclaredObject in its namespace, and the unknown-kind error.
 */
import { UnknownKindAtReadError } from "./errors.ts";
import { contentHash } from "./hash.ts";
import { isJsonObject } from "./json.ts";
import type { JsonObject } from "./json.ts";
import { kindKey, kindsFromCrds } from "./kinds.ts";
import type { KindInfo, KindResolver } from "./kinds.ts";
import type { SourceFormat } from "@driftless/api";
import type { SyncScope } from "./scope.ts";
import type { Manifest, ManifestMetadata } from "./manifest.ts";
import type { LiveNamespace } from "./namespace-selection.ts";
import { describeObject } from "./object-id.ts";
import type { DeclaredObject } from "./result.ts";

export interface DeclareOptions {
  readonly scope: SyncScope;
  readonly kinds: KindResolver;
  /**
   * `unstructured` (the default) or `hierarchy` (Config Sync's `system/`, `cluster/`, `namespaces/`
   * layout). A RepoSync's source is always unstructured, as in Config Sync.
   */
  readonly format?: SourceFormat;
  /**
   * Place objects of kinds nobody defines by where they are (hierarchy: their top-level directory;
   * unstructured: their metadata.namespace) instead of failing with KNV1021. For reading without a
   * cluster (`driftless hydrate`), as `nomos hydrate --no-api-server-check` does.
   */
  readonly allowUnknownKinds?: boolean;
  /**
   * Leave objects of kinds nobody defines out of the declaration, each reported (KNV1021) in the result's
   * `setAside`, and declare the rest, as Config Sync's reconciler applies what it can while a CRD is missing.
   */
  readonly setAsideUnknownKinds?: boolean;
  /** This cluster's name, for ClusterSelectors and `configsync.gke.io/cluster-name-selector` (Config Sync's `--cluster-name`). */
  readonly clusterName?: string;
  /** The cluster's Namespaces, for `mode: dynamic` NamespaceSelectors (unstructured only). */
  readonly liveNamespaces?: readonly LiveNamespace[];
}

/** Every kind the manifests use, keyed by kindKey: undefined when neither the source nor the cluster defines it. */
export async function resolveKinds(
  manifests: readonly Manifest[],
  resolver: KindResolver,
): Promise<ReadonlyMap<string, KindInfo | undefined>> {
  const resolved = new Map<string, KindInfo | undefined>(kindsFromCrds(manifests));
  const pending = new Map<string, Promise<void>>();
  for (const { apiVersion, kind } of manifests) {
    const key = kindKey(apiVersion, kind);
    if (resolved.has(key) || pending.has(key)) continue;
    pending.set(
      key,
      Promise.resolve(resolver.resolveKind(apiVersion, kind)).then((info) => {
        resolved.set(key, info);
      }),
    );
  }
  await Promise.all(pending.values());
  return resolved;
}

/** The manifest as declared in `namespace` ("" when cluster-scoped). */
export function declareObject(manifest: Manifest, info: KindInfo, namespace: string): DeclaredObject {
  const defaulted = namespace !== "" && manifest.metadata.namespace !== namespace;
  const raw: JsonObject = defaulted ? withNamespace(manifest.raw, namespace) : manifest.raw;
  const { namespace: _declared, ...rest } = manifest.metadata;
  const metadata: ManifestMetadata = namespace === "" ? rest : { ...rest, namespace };
  return {
    ...manifest,
    metadata,
    raw,
    id: { group: manifest.group, kind: manifest.kind, namespace, name: manifest.metadata.name },
    sourceHash: contentHash(raw),
    resource: info.resource,
    namespaced: info.namespaced,
  };
}

/** A shallow copy with metadata.namespace set; the parsed manifest is left as it was. */
function withNamespace(raw: JsonObject, namespace: string): JsonObject {
  const metadata = raw["metadata"];
  return { ...raw, metadata: { ...(isJsonObject(metadata) ? metadata : {}), namespace } };
}

export function unknownKind(manifest: Manifest): UnknownKindAtReadError {
  const { group, version, kind, apiVersion, sourcePath } = manifest;
  const { name, namespace } = manifest.metadata;
  const resource = { group, version, kind, ...(namespace !== undefined ? { namespace } : {}), name, sourcePath };
  // Config Sync's words lead ("No CustomResourceDefinition is defined for the type \"Kind.group\" in the cluster").
  const message =
    `${sourcePath}: ${describeObject(resource)}: No CustomResourceDefinition is defined for the type ` +
    `"${group === "" ? kind : `${kind}.${group}`}" in the cluster, nor in the source (${apiVersion}); ` +
    `it is retried once the CRD is installed`;
  return new UnknownKindAtReadError(message, { resources: [resource] });
}
