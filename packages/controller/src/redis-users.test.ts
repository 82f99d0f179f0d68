import { test } from "node:test";
import assert from "node:assert/strict";
import type { RedisConnection } from "@driftless/queue";
import { escapeGlob, ReconcilerRedisUsers } from "./redis-users.ts";

const sync = { kind: "RepoSync", namespace: "team-a", name: "repo.sync" } as const;
const unused = {} as RedisConnection;

test("a reconciler's key pattern is its queue's keys: the prefix's glob characters match only themselves", () => {
  assert.equal(
    new ReconcilerRedisUsers(unused, "driftless", "k").keyPattern(sync),
    "driftless:sync.reposync.team-a.repo.sync:*",
  );
  assert.equal(escapeGlob("a*b?[c]\\d"), "a\\*b\\?\\[c\\]\\\\d");
  assert.equal(new ReconcilerRedisUsers(unused, "t*", "k").keyPattern(sync), "t\\*:sync.reposync.team-a.repo.sync:*");
});

test("user names follow the queue and never hold a space; derived passwords differ per sync, generation and key", () => {
  const users = new ReconcilerRedisUsers(unused, "my prefix", "k");
  assert.equal(users.username(sync), "my%20prefix:sync.reposync.team-a.repo.sync");
  const other = { ...sync, name: "other" };
  const passwords = new Set([
    users.derivedPassword(sync, "g1"),
    users.derivedPassword(sync, "g2"),
    users.derivedPassword(other, "g1"),
    new ReconcilerRedisUsers(unused, "my prefix", "k2").derivedPassword(sync, "g1"),
  ]);
  assert.equal(passwords.size, 4);
  assert.equal(users.derivedPassword(sync, "g1"), users.derivedPassword(sync, "g1"));
});
