/**
 * One real control plane and one real Redis per test run (node --test --test-global-setup).
 * Test processes find them through DRIFTLESS_TEST_ENV (a JSON file), see env.ts.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  down,
  findRepoRoot,
  defaultAdmissionPolicyFiles,
  defaultCrdDir,
  startRedis,
  stopProcess,
  up,
  type RedisServer,
} from "@driftless/local-cluster";
import { controlPlaneOf, type TestEnvironment } from "./env.ts";

const repoRoot = findRepoRoot();
// One folder per run, so two runs on one machine (developers, helpers) never share a control plane.
const runDir = join(repoRoot, ".local", "test-run", `run-${process.pid}`);
const clusterDir = join(runDir, "cluster");
let redis: RedisServer | undefined;

export async function globalSetup(): Promise<void> {
  await rm(runDir, { recursive: true, force: true });
  await mkdir(runDir, { recursive: true });
  const started = Date.now();
  const cluster = await up({
    stateDir: clusterDir,
    crdDir: defaultCrdDir(repoRoot),
    admissionPolicyFiles: defaultAdmissionPolicyFiles(repoRoot),
    detached: false,
    quiet: true,
  });
  redis = await startRedis({ dir: join(runDir, "redis"), detached: false });
  const env: TestEnvironment = {
    ...controlPlaneOf(cluster),
    redisUrl: `redis://:${encodeURIComponent(redis.password)}@127.0.0.1:${redis.port}`,
    redisAddress: redis.url,
    redisPassword: redis.password,
    runDir,
    pids: [...cluster.processes.map((p) => p.pid), redis.process.pid],
  };
  const envFile = join(runDir, "env.json");
  await writeFile(envFile, JSON.stringify(env, null, 2));
  process.env["DRIFTLESS_TEST_ENV"] = envFile;
  process.stderr.write(`test environment ready in ${Date.now() - started} ms: ${cluster.server}, ${redis.url}\n`);
}

export async function globalTeardown(): Promise<void> {
  if (redis !== undefined) await stopProcess(redis.process.pid);
  await down(clusterDir);
  await rm(runDir, { recursive: true, force: true });
}
