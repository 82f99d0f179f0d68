/**
 * @driftless/kube: the typed cluster client the reconciler and manager stand on. Raw HTTP over a
 * keep-alive agent (objects go out exactly as given, `$patch` directives and unknown fields
 * included), classified errors, discovery-backed REST mapping, and list+watch informers.
 *
 * @example
 * import { Informer, KubeClient, RestMapper, isConflict } from "@driftless/kube";
 *
 * const client = await KubeClient.fromKubeconfig(); // in-cluster, or $KUBECONFIG / ~/.kube/config
 * const mapper = new RestMapper(client);
 * const cm = (await mapper.mappingFor("v1", "ConfigMap"))!;
 * const live = await client.get(cm, "default", "settings"); // undefined if absent
 * if (live === undefined) {
 *   await client.create(cm, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "default" }, data: { a: "1" } });
 * } else {
 *   try {
 *     await client.replace(cm, { ...live, data: { a: "2" } }); // conditional on live.metadata.resourceVersion
 *   } catch (error) {
 *     if (!isConflict(error)) throw error; // a Conflict is retryable: re-read and try again
 *   }
 * }
 *
 * const informer = new Informer(client, cm, { namespace: "default" });
 * informer.on("update", (obj, old) => console.log(obj.metadata.name, old?.metadata.resourceVersion, "→", obj.metadata.resourceVersion));
 * informer.start();
 * await informer.synced();
 * // ... informer.get("default", "settings"); informer.list()
 * await informer.stop();
 * client.close();
 */
export { KubeClient } from "./client.ts";
export { configMapMapping, namespaceMapping } from "./core-mappings.ts";
export type {
  DeleteOptions,
  DeleteResult,
  FieldValidation,
  KubeClientOptions,
  KubeRequest,
  ListOptions,
  PatchType,
  WatchOptions,
  WriteOptions,
} from "./client-options.ts";
export type { RawResponse } from "./transport.ts";
export type {
  ApiStatus,
  KubeObject,
  ListPage,
  ObjectList,
  ObjectMeta,
  OwnerReference,
  ResourceMapping,
  StatusCause,
  StatusDetails,
  WatchEvent,
} from "./types.ts";
export { WatchEventType } from "./types.ts";
export {
  KubeApiError,
  KubeReason,
  failureText,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isResourceTypeMissing,
  isTooManyRequests,
  isUnauthorized,
} from "./errors.ts";
export type { KubeApiErrorOptions } from "./errors.ts";
export { requestResource, RequestVerbs, WriteVerbs } from "./request-counter.ts";
export type { RequestCounter, RequestListener, RequestVerb } from "./request-counter.ts";
export { RestMapper } from "./rest-mapper.ts";
export type { KindAbsence, RestMapperOptions } from "./rest-mapper.ts";
export { discover, aggregatedDiscoveryAccept } from "./discovery.ts";
export type { DiscoveredGroup, Discovery, DiscoveryClient } from "./discovery.ts";
export { Informer } from "./informer.ts";
export type { InformerEvent, InformerHandler } from "./informer.ts";
export type { InformerOptions, ListWatchSource } from "./informer-options.ts";
export type { BackoffOptions } from "./backoff.ts";
export { apiVersionOf, groupOf, objectKey, resourcePath, versionOf } from "./paths.ts";
export { apiserverMetrics, apiserverWriteVerbs } from "./apiserver-metrics.ts";
export type { ApiserverMetricsFilter, ApiserverRequestCounts } from "./apiserver-metrics.ts";
export { isNewer as isNewerResourceVersion, storeKey } from "./store.ts";
export { kubeconfigNamespace, loadNativeConnection, readKubeconfigCluster } from "./kubeconfig.ts";
export type { CredentialProvider, KubeconfigCluster, NativeConnection } from "./kubeconfig.ts";
