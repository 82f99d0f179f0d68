import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DriftlessError,
  ErrorClass,
  getCondition,
  KnvCode,
  SyncConditionType,
  type RSync,
  type SyncCondition,
} from "@driftless/api";
import type { KubeClient, KubeObject } from "@driftless/kube";
import { rsyncMapping } from "./rsync.ts";
import { KnownStatus, nextStatus, StatusBudgetBytes, syncingStatus, writeStatus } from "./status.ts";

const now = new Date("2026-11-27T09:00:00Z");
const failed = (commit: string, generation: number) => ({
  observedGeneration: generation,
  lastSyncedCommit: "older",
  conditions: [
    {
      type: SyncConditionType.Syncing,
      status: "False",
      reason: "Source",
      message: "Source",
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

  void it("names a newly fetched commit and its spec on status.source at once, as Config Sync's fetch writes it", () => {
    const gitStatus = { repo: "https://git.example/r", revision: "v2", branch: "main", dir: "config" };
    const current = {
      ...failed("abc", 3),
      source: { commit: "abc", errors: [{ code: "1036", errorMessage: "KNV1036: bad name" }], errorSummary: {} },
    };
    const next = syncingStatus(current, "def", 4, now, { gitStatus });
    assert.deepEqual(next?.["source"], {
      gitStatus,
      commit: "def",
      errorSummary: {},
      lastUpdate: "2026-11-27T09:00:00Z",
    });
    // The commit status.source already names keeps its errors (a retry, or a spec change over the same commit).
    assert.deepEqual(syncingStatus(current, "abc", 4, now, { gitStatus })?.["source"], current.source);
  });

  void it("keeps summarising the errors already reported for the commit it retries, as Config Sync's Syncing=True does", () => {
    const error = { code: "1036", errorMessage: "KNV1036: bad name" };
    const summary = { totalCount: 1, errorCountAfterTruncation: 1 };
    const retried = {
      ...failed("abc", 3),
      source: { commit: "abc", errors: [error], errorSummary: summary },
      sync: { commit: "older" },
    };
    const again = getCondition(
      syncingStatus(retried, "abc", 4, now)?.conditions as SyncCondition[] | undefined,
      SyncConditionType.Syncing,
    );
    assert.deepEqual(
      [again?.status, again?.errorSourceRefs, again?.errorSummary],
      ["True", ["status.source.errors"], summary],
    );
    const fresh = getCondition(
      syncingStatus(retried, "def", 3, now)?.conditions as SyncCondition[] | undefined,
      SyncConditionType.Syncing,
    );
    assert.deepEqual([fresh?.status, fresh?.errorSourceRefs, fresh?.errorSummary], ["True", undefined, {}]);
  });
});

void describe("nextStatus, as Config Sync writes status", () => {
  const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
  const sync = (dir: string): RSync =>
    ({
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name: "root-sync", namespace: "config-management-system", generation: 2 },
      spec: { sourceFormat: "unstructured", git: { repo: "https://git.example.com/r.git", auth: "none", dir } },
    }) as RSync;
  const refused = new DriftlessError({ code: KnvCode.Apply, errorClass: ErrorClass.Terminal, message: "refused" });
  const syncing = (status: Record<string, unknown>): SyncCondition | undefined =>
    getCondition(status["conditions"] as SyncCondition[], SyncConditionType.Syncing);

  void it("writes the directory relative to the repository root and cleaned", () => {
    for (const [dir, written] of [
      ["/acme/", "acme"],
      ["./acme//team/", "acme/team"],
      ["/", "."],
      [".", "."],
    ] as const) {
      const status = nextStatus(
        identity,
        sync(dir),
        {},
        { commit: "c1", sourceErrors: [], syncErrors: [], synced: true },
        now,
      );
      assert.equal((status["source"] as { gitStatus: { dir: string } }).gitStatus.dir, written, dir);
    }
  });

  void it("says Sync Completed, with an error summary, whether or not the sync had errors; Source for source errors", () => {
    const done = nextStatus(
      identity,
      sync("."),
      {},
      { commit: "c1", sourceErrors: [], syncErrors: [], synced: true },
      now,
    );
    assert.deepEqual(
      [syncing(done)?.reason, syncing(done)?.message, syncing(done)?.errorSummary],
      ["Sync", "Sync Completed", {}],
    );
    const failed = nextStatus(
      identity,
      sync("."),
      {},
      { commit: "c1", sourceErrors: [], syncErrors: [refused], synced: false },
      now,
    );
    assert.deepEqual([syncing(failed)?.reason, syncing(failed)?.message], ["Sync", "Sync Completed"]);
    const source = nextStatus(
      identity,
      sync("."),
      {},
      { commit: "c1", sourceErrors: [refused], syncErrors: [], synced: false },
      now,
    );
    assert.deepEqual([syncing(source)?.reason, syncing(source)?.message], ["Source", "Source"]);
  });

  void it("with objects set aside for their kind, status.sync reports the applied commit and Syncing counts both", () => {
    const previous = nextStatus(
      identity,
      sync("."),
      {},
      { commit: "c1", sourceErrors: [], syncErrors: [], synced: true },
      now,
    );
    const unserved = new DriftlessError({
      code: KnvCode.UnknownObjectKind,
      errorClass: ErrorClass.Retry,
      message: "no CRD",
    });
    const report = { commit: "c2", sourceErrors: [unserved], syncErrors: [refused], synced: false } as const;
    const applied = nextStatus(identity, sync("."), previous, { ...report, reachedApply: true }, now);
    const block = applied["sync"] as { commit: string; errors?: { code: string }[] };
    assert.deepEqual([block.commit, block.errors?.map((e) => e.code)], ["c2", ["2009"]]);
    assert.equal(applied["lastSyncedCommit"], "c1", "a commit with objects set aside is not synced");
    const condition = syncing(applied);
    assert.deepEqual(
      [condition?.reason, condition?.message, condition?.commit, condition?.errorSourceRefs, condition?.errorSummary],
      [
        "Sync",
        "Sync Completed",
        "c2",
        ["status.source.errors", "status.sync.errors"],
        { totalCount: 2, errorCountAfterTruncation: 2 },
      ],
    );

    // A source error that stopped the pass before the apply leaves status.sync on the last commit applied.
    const blocked = nextStatus(identity, sync("."), previous, report, now);
    assert.equal((blocked["sync"] as { commit: string }).commit, "c1");
    assert.deepEqual(
      [syncing(blocked)?.reason, syncing(blocked)?.errorSourceRefs],
      ["Source", ["status.source.errors"]],
    );
  });

  void it("lists every error, as Config Sync does; a status too large halves each list and says it is truncated", () => {
    const invalid = (count: number, length: number): DriftlessError[] =>
      Array.from(
        { length: count },
        (_, i) =>
          new DriftlessError({
            code: KnvCode.InvalidMetadataName,
            errorClass: ErrorClass.Terminal,
            message: `object ${i} is invalid ${"x".repeat(length)}`,
          }),
      );
    const report = (errors: DriftlessError[]) => ({
      commit: "c1",
      sourceErrors: errors,
      syncErrors: [],
      synced: false,
    });
    const many = nextStatus(identity, sync("."), {}, report(invalid(120, 10)), now);
    const source = many["source"] as { errors?: unknown[]; errorSummary: unknown };
    assert.deepEqual(
      [source.errors?.length, source.errorSummary],
      [120, { totalCount: 120, errorCountAfterTruncation: 120 }],
    );
    assert.deepEqual(syncing(many)?.errorSummary, { totalCount: 120, errorCountAfterTruncation: 120 });

    // 400 errors of 4 KiB each are 1.6 MiB: a half of them fits under the budget.
    const huge = nextStatus(identity, sync("."), {}, report(invalid(400, 4_000)), now);
    const cut = huge["source"] as { errors?: unknown[]; errorSummary: unknown };
    const summary = { totalCount: 400, truncated: true, errorCountAfterTruncation: 200 };
    assert.deepEqual([cut.errors?.length, cut.errorSummary], [200, summary]);
    assert.deepEqual(syncing(huge)?.errorSummary, summary);
    assert.ok(Buffer.byteLength(JSON.stringify(huge)) <= StatusBudgetBytes);
  });

  void it("after a failed render, status.source names the commit fetched, without the previous commit's errors", () => {
    const before = nextStatus(
      identity,
      sync("."),
      {},
      { commit: "old", sourceErrors: [refused], syncErrors: [], synced: false },
      now,
    );
    const rendering = { message: "Rendering failed", errors: [refused] };
    const after = nextStatus(
      identity,
      sync("."),
      before,
      { commit: "new", sourceErrors: [], syncErrors: [], synced: false, rendering },
      now,
    );
    const source = after["source"] as { commit: string; errors?: unknown };
    assert.deepEqual([source.commit, source.errors], ["new", undefined]);
  });
});

void describe("status blocks as Config Sync's Go type marshals them", () => {
  void it("a fetch that failed before knowing the commit writes no commit (omitempty), nor one on Syncing", () => {
    const unreachable = new DriftlessError({
      code: KnvCode.SourceFetch,
      errorClass: ErrorClass.Retry,
      message: "the remote could not be reached",
    });
    const status = nextStatus(
      { kind: "RootSync", namespace: "config-management-system", name: "root-sync" },
      undefined,
      {},
      { commit: undefined, sourceErrors: [unreachable], syncErrors: [], synced: false },
      now,
    );
    const source = status["source"] as Record<string, unknown>;
    assert.equal("commit" in source, false, JSON.stringify(source));
    const syncing = getCondition(status.conditions, SyncConditionType.Syncing);
    assert.equal(syncing !== undefined && "commit" in syncing, false);
  });
});

void describe("writeStatus", () => {
  const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
  const idle = { lastSyncedCommit: "abc", syncing: false };
  const syncing = { lastSyncedCommit: "abc", syncing: true };

  /** An API server holding the RSync, whose status writes may be stored and then go unanswered (a timeout). */
  function server(): { client: KubeClient; status: () => unknown; loseNextAnswer: () => void } {
    let stored: KubeObject = { apiVersion: "v1", kind: "RootSync", metadata: { name: "root-sync" }, status: idle };
    let lose = false;
    const client = {
      get: () => Promise.resolve(structuredClone(stored)),
      replaceStatus: (_m: unknown, obj: KubeObject) => {
        stored = structuredClone(obj);
        if (!lose) return Promise.resolve(structuredClone(stored));
        lose = false;
        return Promise.reject(new Error("request timed out"));
      },
    } as unknown as KubeClient;
    return { client, status: () => stored["status"], loseNextAnswer: () => (lose = true) };
  }

  void it("reads the status again after a write whose answer was lost, so a pass's last write still lands", async () => {
    const api = server();
    const raw = await api.client.get(rsyncMapping("RootSync"), "", "");
    assert.ok(raw !== undefined);
    const known = new KnownStatus();
    known.remember(raw["status"]);
    const heldSync = { raw, known };

    // A status update while syncing, stored by the server but answered by a timeout.
    api.loseNextAnswer();
    await assert.rejects(writeStatus(api.client, identity, () => syncing, heldSync));
    assert.deepEqual(api.status(), syncing);

    // The pass's own write says what the held copy says: it must not take the held copy for the server's.
    await writeStatus(api.client, identity, () => idle, heldSync);
    assert.deepEqual(api.status(), idle, "Syncing=True of the lost write left on status");
  });
});
