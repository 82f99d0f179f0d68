import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { SyncState } from "../sync-report.ts";

// Scripts branch on `state`: the README's list is the contract, and must name every state printed.
test("the README lists every state `status -o json` prints, and no other", async () => {
  const readme = await readFile(join(import.meta.dirname, "..", "..", "..", "..", "README.md"), "utf8");
  const listed = /`state` \(([^)]*)\)/.exec(readme)?.[1];
  assert.ok(listed !== undefined, "README.md describes no `state` of `status -o json`");
  const states = [...listed.matchAll(/`([A-Z]+)`/g)].map((m) => m[1]);
  assert.deepEqual(states.sort(), Object.values(SyncState).sort());
});
