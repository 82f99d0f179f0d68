import { readFileSync } from "node:fs";
import type { ClusterState } from "@driftless/local-cluster";

/** What the global setup started, for test files (which run in their own processes). */
export interface TestEnvironment {
  readonly server: string;
  readonly caFile: string;
  /** Admin identity (system:masters). */
  readonly kubeconfig: string;
  /** An ordinary identity with no RBAC bindings. */
  readonly userKubeconfig: string;
  readonly adminToken: string;
  readonly userToken: string;
  readonly userName: string;
  /** With the admin password: for clients in test processes (queues, in-process reconcilers). */
  readonly redisUrl: string;
  /** Without credentials, and the admin password: what a manager gets (REDIS_URL, REDIS_PASSWORD). */
  readonly redisAddress: string;
  readonly redisPassword: string;
  readonly runDir: string;
  readonly pids: readonly number[];
}

let cached: TestEnvironment | undefined;

/**
 * The running test environment. Integration tests never skip silently: without the global setup
 * this throws, and the test fails saying how to run it.
 */
export function testEnv(): TestEnvironment {
  if (cached !== undefined) return cached;
  const file = process.env["DRIFTLESS_TEST_ENV"];
  if (file === undefined) {
    throw new Error(
      "no test environment: run integration tests through `npm run test:integration` (it starts the control plane)",
    );
  }
  cached = JSON.parse(readFileSync(file, "utf8")) as TestEnvironment;
  return cached;
}

/** The part of a test environment that says which control plane, and as whom. */
export function controlPlaneOf(
  cluster: ClusterState,
): Pick<
  TestEnvironment,
  "server" | "caFile" | "kubeconfig" | "userKubeconfig" | "adminToken" | "userToken" | "userName"
> {
  return {
    server: cluster.server,
    caFile: cluster.caFile,
    kubeconfig: cluster.kubeconfig,
    userKubeconfig: cluster.userKubeconfig,
    adminToken: cluster.identities.admin.token,
    userToken: cluster.identities.user.token,
    userName: cluster.identities.user.user,
  };
}
