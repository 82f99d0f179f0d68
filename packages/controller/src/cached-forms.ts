/**
 * The forms the manager's watch caches keep objects in (Informer `transform`): only what the manager
 * reads from a cache. A cache holds every watched object for the life of the process, and managedFields
 * alone is often half of one; each job reads its sync afresh from the API server, never from here.
 */
import type { KubeObject } from "@driftless/kube";

/**
 * A RootSync or RepoSync as the watch events, the webhook's push matching and the resync read it:
 * metadata without managedFields, and the spec. The status (the reconciler's to write, and most of
 * a failing sync's size) is never read from the cache.
 */
export function cachedSync(obj: KubeObject): KubeObject {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { ...obj.metadata, managedFields: undefined },
    spec: obj["spec"],
  };
}

/** A Namespace as the terminating check reads it: its name, version, deletion mark and phase. */
export function cachedNamespace(obj: KubeObject): KubeObject {
  const { name, uid, resourceVersion, deletionTimestamp } = obj.metadata;
  const phase = (obj["status"] as { phase?: unknown } | undefined)?.phase;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { name, uid, resourceVersion, deletionTimestamp },
    ...(phase === undefined ? {} : { status: { phase } }),
  };
}

/**
 * A reconciler Deployment, ServiceAccount or binding (watched metadata-only) as the repair trigger reads
 * it: which sync it serves.
 */
export function cachedLabelled(obj: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion, labels } = obj.metadata;
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name, namespace, uid, resourceVersion, labels } };
}
