import { test } from "node:test";
import assert from "node:assert/strict";
import { RecentPushes } from "./recent-pushes.ts";

test("remembers a push for its TTL and at most `capacity` pushes, the oldest forgotten first", () => {
  let now = 0;
  const recent = new RecentPushes({ ttlMs: 1000, capacity: 2, now: () => now });
  const [a, b, c] = ["a", "b", "c"].map((body) => RecentPushes.keyOf("generic", Buffer.from(body)));
  assert.ok(a !== undefined && b !== undefined && c !== undefined);
  recent.remember(a);
  recent.remember(b);
  assert.ok(recent.has(a) && recent.has(b));
  recent.remember(c);
  assert.equal(recent.has(a), false, "over capacity, the oldest goes");
  assert.ok(recent.has(b) && recent.has(c));
  now = 1001;
  assert.equal(recent.has(b), false, "expired");
});

test("the same body from two providers is two pushes", () => {
  const body = Buffer.from("{}");
  assert.notEqual(RecentPushes.keyOf("github", body), RecentPushes.keyOf("gitlab", body));
});
