/**
 * @driftless/local-cluster: a real Kubernetes control plane (etcd, kube-apiserver,
 * kube-controller-manager) built from Go modules and run on loopback, for tests and laptops.
 *
 * @example
 * import { up, down } from "@driftless/local-cluster";
 * const cluster = await up({ stateDir: "/tmp/c1", crdDir: "manifests/crds", detached: false });
 * // cluster.kubeconfig (admin), cluster.userKubeconfig (no RBAC bindings)
 * await down("/tmp/c1");
 *
 * With `withNode: true` it also runs a node (kubelet on containerd + runc, CNI bridge, kube-proxy,
 * kube-scheduler), and `importImage(archive)` loads a locally built image into the node's containerd.
 */
export { up, down, readState, isHealthy } from "./cluster.ts";
export type { ClusterOptions, ClusterState } from "./cluster.ts";
export type { Identity, Identities, NodeIdentities } from "./identities.ts";
export { ensureBinaries, ensureNodeBinaries } from "./binaries.ts";
export type { Binaries, NodeBinaries } from "./binaries.ts";
export { installCrds } from "./crds.ts";
export { installAdmissionPolicies } from "./admission-policies.ts";
export { apiRequest } from "./http.ts";
export type { ApiRequest, ApiResponse } from "./http.ts";
export { isAlive } from "./processes.ts";
export {
  findRepoRoot,
  defaultAdmissionPolicyFiles,
  defaultCrdDir,
  defaultStateDir,
  nodeContainerdNamespace,
  nodeContainerdSocket,
  nodeRuntimeDir,
  nodeStateDir,
} from "./paths.ts";
export { importImage, listContainers } from "./node/containerd.ts";
export type { NodeState } from "./node/node.ts";
export { releaseNodeSlot } from "./node/slot.ts";
export { nodeNetwork, listNodeChains } from "./node/network.ts";
export { mountsUnder } from "./node/mounts.ts";
export { podCgroups } from "./node/cgroups.ts";
export {
  writeOciArchive,
  writeBusyboxImage,
  writePauseImage,
  busyboxImageName,
  pauseImageName,
} from "./node/oci-image.ts";
export type { ImageSpec } from "./node/oci-image.ts";
export { startRedis } from "./redis.ts";
export type { RedisServer, StartRedisOptions } from "./redis.ts";
export { stopProcess } from "./processes.ts";
export type { ProcessRecord } from "./processes.ts";
export { freeLoopbackPort } from "./ports.ts";
export { tailLog } from "./logs.ts";
export { startProcess } from "./processes.ts";
