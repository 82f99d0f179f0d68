/**
 * A commit with many invalid objects reports every error, as Config Sync's status does: its lists are cut
 * only when the status would be too large to write, not at a count (driftless listed 50 and said truncated).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  createRootSync,
  eventually,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

test("120 invalid objects are 120 errors on status.source and on the Syncing condition, none truncated", async (t) => {
  const repo = await TestRepo.create(t);
  const invalid = Array.from({ length: 120 }, (_, i) =>
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `Bad_Name${i}`, namespace: "default" } }),
  );
  await repo.write("config/invalid.yaml", invalid.join("\n---\n"));
  const commit = await repo.commit("120 invalid names");
  const name = `many-errors-${suffix()}`;
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  const status = await eventually(
    async () => {
      const current = await rootSyncStatus(name);
      return (current["source"] as JsonObject | undefined)?.["commit"] === commit &&
        (((current["source"] as JsonObject)["errors"] ?? []) as unknown[]).length > 0
        ? current
        : undefined;
    },
    { what: `RootSync ${name} to report the source errors of ${commit.slice(0, 7)}` },
  );
  const source = status["source"] as JsonObject;
  const errors = source["errors"] as JsonObject[];
  assert.equal(errors.length, 120);
  assert.deepEqual(new Set(errors.map((e) => e["code"])), new Set(["1036"]));
  const summary = { totalCount: 120, errorCountAfterTruncation: 120 };
  assert.deepEqual(source["errorSummary"], summary);
  const syncing = ((status["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Syncing");
  assert.deepEqual(
    [syncing?.["commit"], syncing?.["errorSourceRefs"], syncing?.["errorSummary"]],
    [commit, ["status.source.errors"], summary],
  );
});
