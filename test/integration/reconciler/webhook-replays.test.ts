/**
 * A webhook push for the commit already synced ends after its ls-remote, as an unchanged poll does: a
 * replayed push (the same signed body, again and again) used to run a full pass (match, ls-remote with the
 * sync's credentials) for every job it became. A push of a new commit, a `driftless sync` request and a
 * spec change still run in full at once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SyncAnnotation } from "@driftless/api";
import { SyncQueue } from "@driftless/queue";
import { createLogger } from "@driftless/sync";
import {
  createRepoSync,
  customApi,
  eventually,
  type JsonObject,
  repoSyncStatus,
  startReconciler,
  suffix,
  testEnv,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

const configMap = (namespace: string, value: string): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace }, data: { value } });

/** The reconciler's "pass finished" lines, parsed. */
function finishedPasses(lines: readonly string[]): JsonObject[] {
  return lines.map((line) => JSON.parse(line) as JsonObject).filter((line) => line["msg"] === "pass finished");
}

/** Changes the RepoSync with a fresh read each try (a 409 from the reconciler's own status write retries). */
async function changeRepoSync(namespace: string, change: (sync: JsonObject) => void): Promise<void> {
  const reposyncs = { group: "configsync.gke.io", version: "v1beta1", namespace, plural: "reposyncs" };
  await eventually(
    async () => {
      const live = (await customApi().getNamespacedCustomObject({ ...reposyncs, name: "repo-sync" })) as JsonObject;
      change(live);
      await customApi().replaceNamespacedCustomObject({ ...reposyncs, name: "repo-sync", body: live });
      return true;
    },
    { what: "the RepoSync changed" },
  );
}

test("webhook pushes for the synced commit run no full pass; a new commit, a sync request and a spec change do", async (t) => {
  const namespace = await testNamespace(t, "hook");
  const repo = await TestRepo.create(t);
  await repo.write("config/cm.yaml", configMap(namespace, "1"));
  const synced = await repo.commit("v1");
  await createRepoSync(namespace, repo);
  const identity = { kind: "RepoSync", namespace, name: "repo-sync" } as const;
  const queuePrefix = `t${suffix()}`;
  const lines: string[] = [];
  // No poll after the first: every later pass comes from a job this test enqueues, as the manager's push router does.
  const reconciler = await startReconciler(t, identity, {
    queuePrefix,
    pollPeriodMs: 3_600_000,
    log: createLogger({}, { level: "info", write: (line) => void lines.push(line) }),
  });
  const queue = new SyncQueue({ sync: identity, connection: testEnv().redisUrl, prefix: queuePrefix });
  t.after(() => queue.close());
  await eventually(
    async () => (await repoSyncStatus(namespace))["lastSyncedCommit"] === synced && reconciler.passCount > 0,
    {
      what: "the first poll to sync v1",
    },
  );

  /** Enqueues one webhook job and waits for its pass (skipped or not) to end; returns the new "pass finished" lines. */
  const push = async (commit: string): Promise<JsonObject[]> => {
    const before = { passes: reconciler.passCount, lines: finishedPasses(lines).length };
    await queue.enqueue("webhook", { reason: `push to ${repo.branch}`, commit });
    await eventually(() => reconciler.passCount > before.passes, { what: "the webhook job's pass" });
    return finishedPasses(lines).slice(before.lines);
  };

  // The same push, replayed: each becomes its own job (the previous one has ended), none a full pass.
  const replayed: JsonObject[] = [];
  for (let i = 0; i < 10; i++) replayed.push(...(await push(synced)));
  assert.deepEqual(
    replayed.map((line) => `${String(line["trigger"])} ${String(line["commit"])}`),
    [],
    "10 webhook jobs for the synced commit ran full passes",
  );

  // A push of a new commit syncs at once (the next poll is an hour away).
  await repo.write("config/cm.yaml", configMap(namespace, "2"));
  const next = await repo.commit("v2");
  const pushed = await push(next);
  assert.deepEqual(
    pushed.map((line) => [line["trigger"], line["commit"], line["synced"]]),
    [["webhook", next, true]],
  );
  assert.equal((await repoSyncStatus(namespace))["lastSyncedCommit"], next);

  // `driftless sync` (sync-requested-at) forces a full pass whatever job carries it, here a replayed push.
  const requestedAt = new Date().toISOString();
  await changeRepoSync(namespace, (sync) => {
    const metadata = sync["metadata"] as JsonObject;
    metadata["annotations"] = {
      ...(metadata["annotations"] as Record<string, string>),
      [SyncAnnotation.SyncRequestedAt]: requestedAt,
    };
  });
  await eventually(
    async () => {
      const passes = await push(next);
      return passes.some((line) => line["trigger"] === "webhook" && line["commit"] === next);
    },
    { what: "a full pass for the sync request (the reconciler's watch may not have seen the annotation yet)" },
  );

  // A spec change (a new generation) runs in full too, on the same commit. The pass may be the webhook job's, or,
  // when the reconciler's watch sees the new generation during that job's skipped pass, the one it asks for then.
  const beforeSpecChange = finishedPasses(lines).length;
  await changeRepoSync(namespace, (sync) => {
    const spec = sync["spec"] as JsonObject;
    spec["override"] = { ...(spec["override"] as JsonObject | undefined), reconcileTimeout: "4m" };
  });
  await eventually(
    async () => {
      await push(next);
      return finishedPasses(lines)
        .slice(beforeSpecChange)
        .some((line) => line["commit"] === next);
    },
    { what: "a full pass for the new generation" },
  );
});
