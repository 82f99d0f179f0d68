import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { createLogger, Reconciler, type ReconcilerOptions } from "@driftless/sync";
import { testEnv } from "./env.ts";
import { suffix } from "./kube.ts";
import { testFailed } from "./test-outcome.ts";
import { quietly, removeQuietly } from "./cleanup.ts";

/**
 * Runs a real Reconciler in the test process against the local control plane, the run's Redis (own
 * queue prefix) and a real git repository, and stops it when the test ends.
 */
export async function startReconciler(
  t: TestContext,
  identity: ReconcilerOptions["identity"],
  options: Partial<Omit<ReconcilerOptions, "identity">> = {},
): Promise<Reconciler> {
  const cacheDir = await mkdtemp(join(tmpdir(), "driftless-reconciler-"));
  const lines: string[] = [];
  const reconciler = await Reconciler.start({
    identity,
    kubeconfig: testEnv().kubeconfig,
    redisUrl: testEnv().redisUrl,
    queuePrefix: `t${suffix()}`,
    cacheDir,
    pollPeriodMs: 300,
    allowFileTransport: true,
    // Keep logs for the failure message instead of flooding the test output.
    log: createLogger({ test: t.name }, { level: "debug", write: (line) => void lines.push(line) }),
    ...options,
  });
  t.after(async () => {
    await quietly(`stopping the reconciler of ${t.name}`, () => reconciler.stop(5_000));
    await removeQuietly(cacheDir);
    // On a failure, CI's log is all there is to read it by.
    if (process.env["DRIFTLESS_TEST_LOGS"] === "1" || testFailed(t))
      process.stderr.write(`--- reconciler of ${t.name} ---\n${lines.join("")}`);
  });
  return reconciler;
}
