import { test } from "node:test";
import assert from "node:assert/strict";
import { SyncQueues } from "../../../packages/controller/src/sync-queues.ts";
import { testConnection, testPrefix, testSync } from "./helpers.ts";

test("a manager's sync queue handles of syncs that are gone are closed, and the others still enqueue", async (t) => {
  const queues = new SyncQueues(testConnection(t), testPrefix());
  t.after(() => queues.close());
  const [kept, gone] = [testSync(), testSync()];
  await queues.get(kept).enqueue("webhook", { reason: "push" });
  await queues.get(gone).enqueue("webhook", { reason: "push" });
  assert.equal(queues.size, 2);

  await queues.keepOnly([kept]);
  assert.equal(queues.size, 1, "the gone sync's handle is still open");
  // The kept handle still works: its waiting job absorbs the new trigger.
  const again = await queues.get(kept).enqueue("webhook", { reason: "another push" });
  assert.equal(again.deduplicated, true);
});
