import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  clearCondition,
  getCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
  SyncConditionType,
} from "./conditions.ts";
import type { SyncCondition } from "./sync-status-types.ts";

const t0 = new Date("2024-05-01T10:00:00.123Z");
const t1 = new Date("2024-05-01T10:05:00.000Z");

void describe("setCondition", () => {
  void it("adds a new condition with both times set to now, in whole seconds", () => {
    const { conditions, changed } = setCondition(undefined, { type: "Syncing", status: "True", reason: "Sync" }, t0);
    assert.ok(changed);
    assert.deepEqual(conditions, [
      {
        type: "Syncing",
        status: "True",
        lastUpdateTime: "2024-05-01T10:00:00Z",
        lastTransitionTime: "2024-05-01T10:00:00Z",
        reason: "Sync",
      },
    ]);
  });

  void it("keeps lastTransitionTime when only the message changes, and moves lastUpdateTime", () => {
    const first = setCondition(undefined, { type: "Syncing", status: "True", message: "a" }, t0).conditions;
    const second = setCondition(first, { type: "Syncing", status: "True", message: "b" }, t1).conditions;
    const syncing = getCondition(second, "Syncing");
    assert.equal(syncing?.lastTransitionTime, "2024-05-01T10:00:00Z");
    assert.equal(syncing?.lastUpdateTime, "2024-05-01T10:05:00Z");
    assert.equal(syncing?.message, "b");
  });

  void it("moves lastTransitionTime when the status flips", () => {
    const first = setCondition(undefined, { type: "Syncing", status: "True" }, t0).conditions;
    const second = setCondition(first, { type: "Syncing", status: "False" }, t1).conditions;
    assert.equal(getCondition(second, "Syncing")?.lastTransitionTime, "2024-05-01T10:05:00Z");
  });

  void it("reports no change, and returns the same array, when the condition already says the same", () => {
    const errors = [{ code: "2009", errorMessage: "KNV2009: boom" }];
    const first = setCondition(undefined, { type: "Stalled", status: "True", errors }, t0).conditions;
    const again = setCondition(first, { type: "Stalled", status: "True", errors: [...errors] }, t1);
    assert.equal(again.changed, false);
    assert.equal(again.conditions, first);
  });

  void it("reports no change when the stored condition has the API server's key order", () => {
    // The API server hands a custom resource back with every map's keys sorted; a condition read
    // that way and one built by the reconciler say the same thing in another order.
    const errorSummary = { totalCount: 2, truncated: false, errorCountAfterTruncation: 2 };
    const errors = [{ code: "2009", errorMessage: "KNV2009: boom", resources: [{ name: "a", kind: "Deployment" }] }];
    const input = { type: "Syncing", status: "False" as const, reason: "Sync", errors, errorSummary };
    const built = setCondition(undefined, input, t0).conditions;
    const stored = JSON.parse(JSON.stringify(built, (_key, value: unknown) => sortedKeys(value))) as SyncCondition[];
    assert.notEqual(JSON.stringify(stored), JSON.stringify(built), "the fixture must differ in key order");
    const again = setCondition(stored, { ...input, errorSummary: { ...errorSummary } }, t1);
    assert.equal(again.changed, false);
    assert.equal(getCondition(again.conditions, "Syncing")?.lastUpdateTime, "2024-05-01T10:00:00Z");
  });

  void it("leaves other conditions in place and in order", () => {
    const existing: SyncCondition[] = [
      { type: "Reconciling", status: "False" },
      { type: "Syncing", status: "True" },
    ];
    const { conditions } = setCondition(existing, { type: "Reconciling", status: "True" }, t0);
    assert.deepEqual(
      conditions.map((c) => [c.type, c.status]),
      [
        ["Reconciling", "True"],
        ["Syncing", "True"],
      ],
    );
    assert.equal(conditions[1], existing[1]);
  });

  void it("does not write empty errors, errorSourceRefs or strings", () => {
    const { conditions } = setCondition(
      undefined,
      { type: "Syncing", status: "False", reason: "", errors: [], errorSourceRefs: [] },
      t0,
    );
    assert.deepEqual(Object.keys(conditions[0] ?? {}).sort(), [
      "lastTransitionTime",
      "lastUpdateTime",
      "status",
      "type",
    ]);
  });
});

void describe("removeCondition and queries", () => {
  void it("removes only the named condition and reports whether anything changed", () => {
    const existing: SyncCondition[] = [{ type: "ReconcilerFinalizing", status: "True" }];
    assert.deepEqual(removeCondition(existing, SyncConditionType.ReconcilerFinalizing), {
      conditions: [],
      changed: true,
    });
    const none = removeCondition(existing, SyncConditionType.Stalled);
    assert.equal(none.changed, false);
    assert.equal(none.conditions, existing);
  });

  void it("clears as Config Sync's ClearCondition: True turns False with no reason, False or absent stays", () => {
    const now = new Date("2026-11-28T20:00:00Z");
    const stalled: SyncCondition[] = [
      {
        type: "Stalled",
        status: "True",
        reason: "Validation",
        message: "KNV1061: bad",
        errorSummary: { totalCount: 1 },
      },
    ];
    const cleared = clearCondition(stalled, SyncConditionType.Stalled, now);
    assert.equal(cleared.changed, true);
    assert.deepEqual(cleared.conditions, [
      {
        type: "Stalled",
        status: "False",
        lastUpdateTime: "2026-11-28T20:00:00Z",
        lastTransitionTime: "2026-11-28T20:00:00Z",
      },
    ]);
    const absent = clearCondition([], SyncConditionType.Stalled, now);
    assert.deepEqual(absent, { conditions: [], changed: false });
    const already = clearCondition(cleared.conditions, SyncConditionType.Stalled, new Date("2026-11-28T21:00:00Z"));
    assert.equal(already.changed, false);
    assert.equal(already.conditions, cleared.conditions);
  });

  void it("answers whether a condition is True", () => {
    const existing: SyncCondition[] = [{ type: "Stalled", status: "True" }];
    assert.ok(isConditionTrue(existing, "Stalled"));
    assert.ok(!isConditionTrue(existing, "Syncing"));
    assert.ok(!isConditionTrue(undefined, "Stalled"));
  });
});

function sortedKeys(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
