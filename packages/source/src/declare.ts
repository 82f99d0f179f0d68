/**
 * Step two, against the cluster's types: each manifest's kind is resolved (CRDs in the source first,
 * then the resolver), the object is placed in its namespace for this sync, hashed, and checked for
 * duplicates. Separate from reading so the reconciler can re-run it after discovery changes (a CRD
 * was just installed) without reading files again.
 */
import { UnknownKindError } from "./errors.ts";
import type { SourceError } from "./errors.ts";
import { findDuplicates } from "./duplicates.ts";
import { contentHash } from "./hash.ts";
import { isJsonObject } from "./json.ts";
import type { JsonObject } from "./json.ts";
import { kindKey, kindsFromCrds } from "./kinds.ts";
import type { KindInfo, KindResolver } from "./kinds.ts";
import type { Manifest, ManifestMetadata } from "./manifest.ts";
import { describeObject } from "./object-id.ts";
import type { DeclaredObject, ManifestSet, SourceResult } from "./result.ts";
import { toSourceResult } from "./result.ts";
import { placeObject } from "./scope.ts";
import type { SyncScope } from "./scope.ts";

export interface DeclareOptions {
  readonly scope: SyncScope;
  readonly kinds: KindResolver;
}

/**
 * Turns a ManifestSet into the sync's declared objects. Errors from reading are carried over, so the
 * result is complete only if both steps found nothing wrong. Rejects only if the resolver rejects
 * (discovery failing is not a problem with the source).
 */
export async function declareObjects(set: ManifestSet, options: DeclareOptions): Promise<SourceResult> {
  const kinds = await resolveKinds(set.manifests, options.kinds);
  const errors: SourceError[] = [...set.errors];
  const objects: DeclaredObject[] = [];
  for (const manifest of set.manifests) {
    const info = kinds.get(kindKey(manifest.apiVersion, manifest.kind));
    if (!info) {
      errors.push(unknownKind(manifest));
      continue;
    }
    const placement = placeObject(manifest, info.namespaced, options.scope);
    if (!placement.ok) {
      errors.push(placement.error);
      continue;
    }
    objects.push(declare(manifest, info, placement.namespace));
  }
  const duplicates = findDuplicates(objects);
  errors.push(...duplicates);
  return toSourceResult(objects, errors, { fileCount: set.fileCount, localConfigSkipped: set.localConfigSkipped });
}

async function resolveKinds(
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

function declare(manifest: Manifest, info: KindInfo, namespace: string): DeclaredObject {
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

function unknownKind(manifest: Manifest): UnknownKindError {
  const { group, version, kind, apiVersion, sourcePath } = manifest;
  const { name, namespace } = manifest.metadata;
  const resource = { group, version, kind, ...(namespace !== undefined ? { namespace } : {}), name, sourcePath };
  const message =
    `${sourcePath}: ${describeObject(resource)}: the cluster does not serve kind ${kind} in ${apiVersion}, and no ` +
    `CustomResourceDefinition in the source defines it; it will be retried once the CRD is installed`;
  return new UnknownKindError(message, { resources: [resource] });
}
