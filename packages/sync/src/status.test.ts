import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getCondition, SyncConditionType, type SyncCondition } from "@driftless/api";
import { syncingStatus } from "./status.ts";

const now = new Date("2026-11-27T09:00:00Z");
const failed = (commit: string, generation: number) => ({
  observedGeneration: generation,
  lastSyncedCommit: "older",
  conditions: [
    {
      type: SyncConditionType.Syncing,
      status: "False",
      reason: "Source",
      message: "Source Error",
      commit,
      lastUpdateTime: "2026-11-27T08:00:00Z",
      lastTransitionTime: "2026-11-27T08:00:00Z",
    } satisfies SyncCondition,
  ],
});

void describe("syncingStatus", () => {
  void it("writes nothing for the synced commit", () => {
    assert.equal(syncingStatus({ lastSyncedCommit: "abc", observedGeneration: 1 }, "abc", 1, now), undefined);
  });

  void it("writes nothing for a retry of the commit that failed, with the same spec", () => {
    assert.equal(syncingStatus(failed("abc", 3), "abc", 3, now), undefined);
  });

  void it("marks Syncing=True for a new commit, or for the failed commit under a new spec", () => {
    for (const [commit, generation] of [
      ["def", 3],
      ["abc", 4],
    ] as const) {
      const next = syncingStatus(failed("abc", 3), commit, generation, now);
      const syncing = getCondition(next?.conditions as SyncCondition[] | undefined, SyncConditionType.Syncing);
      assert.equal(syncing?.status, "True", `${commit} at generation ${generation}`);
      assert.equal(syncing.commit, commit);
    }
  });
});
