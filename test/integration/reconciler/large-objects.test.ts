/**
 * Objects Config Sync syncs whatever their size (its server-side apply keeps no copy of the object):
 * a ConfigMap with ~900 KiB of incompressible binaryData, and one whose own annotations take ~150 KiB.
 * driftless's last-applied record keeps digests of long values, so it fits the API server's 256 KiB
 * annotation budget, and the three-way match still writes changes, corrects drift and stays idle.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import {
  coreApi,
  createRepoSync,
  eventually,
  type JsonObject,
  repoSyncStatus,
  startReconciler,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

const yaml = (obj: unknown): string => JSON.stringify(obj);
/** Random bytes as base64: brotli cannot shrink it below ~75%. */
const noise = (bytes: number): string => randomBytes(bytes).toString("base64");

/** Resolves once status says `commit` is synced with no errors; on timeout, says what status holds. */
async function synced(namespace: string, commit: string): Promise<void> {
  try {
    await eventually(
      async () => {
        const status = await repoSyncStatus(namespace);
        const syncing = ((status["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Syncing");
        return status["lastSyncedCommit"] === commit && syncing?.["status"] === "False" && syncing["commit"] === commit;
      },
      { what: `commit ${commit.slice(0, 7)} synced` },
    );
  } catch (error) {
    const sync = (await repoSyncStatus(namespace))["sync"];
    throw new Error(`${(error as Error).message}; status.sync: ${JSON.stringify(sync).slice(0, 2000)}`, {
      cause: error,
    });
  }
}

function binaryConfigMap(namespace: string, blob: string): JsonObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "binary", namespace },
    data: { note: "a large blob" },
    binaryData: { blob },
  };
}

function annotatedConfigMap(namespace: string, annotations: Record<string, string>): JsonObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "annotated", namespace, annotations },
    data: { a: "1" },
  };
}

async function live(namespace: string, name: string): Promise<JsonObject> {
  return (await coreApi().readNamespacedConfigMap({ namespace, name })) as unknown as JsonObject;
}

function annotationsOf(cm: JsonObject): Record<string, string> {
  return ((cm["metadata"] as JsonObject)["annotations"] ?? {}) as Record<string, string>;
}

const blobOf = (cm: JsonObject): unknown => (cm["binaryData"] as JsonObject | undefined)?.["blob"];

test("a ConfigMap with 900 KiB of random binaryData and one with 150 KiB of annotations sync, change, are corrected and stay idle", async (t) => {
  const namespace = await testNamespace(t);
  const notes: Record<string, string> = {};
  for (let i = 0; i < 150; i++) notes[`example.com/note-${i}`] = noise(768);
  const blob = noise(680 * 1024);
  assert.ok(blob.length > 900 * 1024);

  const repo = await TestRepo.create(t);
  await repo.write("config/binary.yaml", yaml(binaryConfigMap(namespace, blob)));
  await repo.write("config/annotated.yaml", yaml(annotatedConfigMap(namespace, notes)));
  const first = await repo.commit("a large ConfigMap and a heavily annotated one");
  await createRepoSync(namespace, repo);
  // resyncPeriodMs 0: every poll is a full pass, a three-way match of both objects.
  const reconciler = await startReconciler(
    t,
    { kind: "RepoSync", namespace, name: "repo-sync" },
    { resyncPeriodMs: 0 },
  );
  await synced(namespace, first);
  assert.equal(blobOf(await live(namespace, "binary")), blob);
  assert.deepEqual(
    Object.fromEntries(Object.entries(annotationsOf(await live(namespace, "annotated"))).filter(([k]) => k in notes)),
    notes,
  );

  // Idle: after the first passes' trailing status writes, three full passes write nothing.
  const settled = reconciler.passCount;
  await eventually(() => reconciler.passCount >= settled + 1, { what: "one more pass" });
  const writesBefore = reconciler.client.requests.writes();
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 3, { what: "three more passes" });
  assert.equal(reconciler.client.requests.writes() - writesBefore, 0, "an idle pass wrote to the API server");

  // A value changed in Git is written; an annotation dropped from Git is removed.
  const newBlob = noise(680 * 1024);
  const changedNotes: Record<string, string> = { ...notes, "example.com/note-0": noise(768) };
  delete changedNotes["example.com/note-149"];
  await repo.write("config/binary.yaml", yaml(binaryConfigMap(namespace, newBlob)));
  await repo.write("config/annotated.yaml", yaml(annotatedConfigMap(namespace, changedNotes)));
  const second = await repo.commit("a new blob, a changed annotation, one annotation fewer");
  await synced(namespace, second);
  assert.equal(blobOf(await live(namespace, "binary")), newBlob);
  const annotated = annotationsOf(await live(namespace, "annotated"));
  assert.equal(annotated["example.com/note-0"], changedNotes["example.com/note-0"]);
  assert.equal(annotated["example.com/note-149"], undefined, "an annotation dropped from Git stays live");

  // Changed live: both are corrected.
  const binary = await live(namespace, "binary");
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "binary",
    body: { ...binary, binaryData: { blob: noise(1024) } } as never,
  });
  const edited = await live(namespace, "annotated");
  (edited["metadata"] as JsonObject)["annotations"] = { ...annotationsOf(edited), "example.com/note-1": "edited" };
  await coreApi().replaceNamespacedConfigMap({ namespace, name: "annotated", body: edited as never });
  await eventually(
    async () =>
      blobOf(await live(namespace, "binary")) === newBlob &&
      annotationsOf(await live(namespace, "annotated"))["example.com/note-1"] === notes["example.com/note-1"],
    { what: "the live edits corrected", timeoutMs: 30_000 },
  );
});
