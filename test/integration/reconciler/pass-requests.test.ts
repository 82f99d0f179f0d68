/**
 * A pass the reconciler asks for itself (a management conflict, a fight, a failed correction) must run
 * in full even when the queue folds it into a poll job: BullMQ keeps one waiting job per sync and drops
 * a trigger while that job waits, and a poll of an unchanged commit skips the apply.
 */
import { test } from "node:test";
import { Queue } from "bullmq";
import { ManagedAnnotation, managerAnnotationValue } from "@driftless/api";
import { syncQueueName } from "@driftless/queue";
import {
  coreApi,
  createRepoSync,
  eventually,
  type JsonObject,
  repoSyncStatus,
  rootSyncNamespace,
  startReconciler,
  suffix,
  testEnv,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

const syncErrors = (status: JsonObject): JsonObject[] =>
  ((status["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];

test("a conflict found while a poll waits in the queue still gets its pass: KNV1060 without waiting for the resync", async (t) => {
  const namespace = await testNamespace(t, "ask");
  const source = await TestRepo.create(t);
  await source.write(
    "config/cm.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shared", namespace }, data: { a: "1" } }),
  );
  const commit = await source.commit("the RepoSync declares a ConfigMap");
  await createRepoSync(namespace, source);
  const identity = { kind: "RepoSync", namespace, name: "repo-sync" } as const;
  const queuePrefix = `t${suffix()}`;
  // No poll of its own after the first: the test enqueues the one poll that matters.
  const reconciler = await startReconciler(t, identity, { queuePrefix, pollPeriodMs: 3_600_000 });
  await eventually(async () => (await repoSyncStatus(namespace))["lastSyncedCommit"] === commit, {
    what: "the RepoSync to sync",
  });

  // Hold the worker once its first job is done, and let a poll wait in the queue.
  const queue = new Queue(syncQueueName(identity), { connection: { url: testEnv().redisUrl }, prefix: queuePrefix });
  t.after(() => queue.close());
  await queue.pause();
  await eventually(async () => (await queue.getActiveCount()) === 0, { what: "the first pass's job to end" });
  await reconciler.trigger("poll", "test: a poll that waits");

  // Record the passes the reconciler asks for once they are enqueued (or folded into the waiting poll).
  const asked: string[] = [];
  const trigger = reconciler.trigger.bind(reconciler);
  reconciler.trigger = async (kind, reason) => {
    await trigger(kind, reason);
    asked.push(`${kind}: ${reason ?? ""}`);
  };

  // Another sync with precedence takes the object over: the remediator sees a conflict and asks for a pass.
  const live = (await coreApi().readNamespacedConfigMap({ namespace, name: "shared" })) as unknown as JsonObject;
  const metadata = live["metadata"] as JsonObject;
  const annotations = { ...(metadata["annotations"] as Record<string, string>) };
  annotations[ManagedAnnotation.Manager] = managerAnnotationValue("RootSync", rootSyncNamespace, `other-${suffix()}`);
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "shared",
    body: { ...live, metadata: { ...metadata, annotations } } as never,
  });
  await eventually(() => asked.some((reason) => reason.includes("management conflict")), {
    what: "the reconciler to ask for a pass for the conflict",
  });
  await queue.resume();

  // Well inside the 5-minute resync that an unchanged poll would otherwise wait for.
  await eventually(async () => syncErrors(await repoSyncStatus(namespace)).some((e) => e["code"] === "1060"), {
    timeoutMs: 30_000,
    what: "the RepoSync to report KNV1060",
  });
});
