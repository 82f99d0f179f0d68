/**
 * @driftless/local-cluster: a real Kubernetes control plane (etcd, kube-apiserver,
 * kube-controller-manager) built from Go modules and run on loopback, for tests and laptops.
 *
 * @example
 * import { up, down } from "@driftless/local-cluster";
 * const cluster = await up({ stateDir: "/tmp/c1", crdDir: "manifests/crds", detached: false });
 * // cluster.kubeconfig (admin), cluster.userKubeconfig (no RBAC bindings)
 * await down("/tmp/c1");
 */
export { up, down, readState, isHealthy } from "./cluster.ts";
export type { ClusterOptions, ClusterState } from "./cluster.ts";
export type { Identity, Identities } from "./identities.ts";
export { ensureBinaries } from "./binaries.ts";
export type { Binaries } from "./binaries.ts";
export { installCrds } from "./crds.ts";
export { apiRequest } from "./http.ts";
export type { ApiRequest, ApiResponse } from "./http.ts";
export { isAlive } from "./processes.ts";
export { findRepoRoot, defaultCrdDir, defaultStateDir } from "./paths.ts";
export { startRedis } from "./redis.ts";
export type { RedisServer, StartRedisOptions } from "./redis.ts";
export { stopProcess } from "./processes.ts";
export type { ProcessRecord } from "./processes.ts";
export { freeLoopbackPort } from "./ports.ts";
export { tailLog } from "./logs.ts";
export { startProcess } from "./processes.ts";
