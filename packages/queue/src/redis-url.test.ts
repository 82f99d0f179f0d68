import { test } from "node:test";
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import {
  hasRedisPassword,
  isRedisUrl,
  redisPasswordOf,
  withoutRedisCredentials,
  withoutRedisPassword,
  withRedisCredentials,
  withRedisPassword,
} from "./redis-url.ts";

test("a password of any characters reaches ioredis unchanged through the URL", () => {
  for (const password of ["s3cret", "p@ss:w/rd", "100%41 sure", "#?&=+ ~!'()*", "ünïcode"]) {
    const url = withRedisPassword("redis://redis.config-management-system.svc:6379/2", password);
    const client = new Redis(url, { lazyConnect: true });
    assert.equal(client.options.password, password, url);
    assert.equal(client.options.host, "redis.config-management-system.svc");
    assert.equal(client.options.db, 2);
    client.disconnect();
  }
});

test("the password replaces one in the URL; removing it keeps the user, host and database", () => {
  assert.equal(withRedisPassword("redis://:old@h:1", "new"), "redis://:new@h:1");
  assert.equal(withoutRedisPassword("rediss://driftless:pw@h:6380/1"), "rediss://driftless@h:6380/1");
  assert.equal(hasRedisPassword("redis://:pw@h:1"), true);
  assert.equal(hasRedisPassword("redis://user@h:1"), false);
});

test("only redis:// and rediss:// URLs with a host are Redis URLs", () => {
  assert.equal(isRedisUrl("redis://127.0.0.1:6379"), true);
  assert.equal(isRedisUrl("rediss://user:pw@h:6380/0"), true);
  assert.equal(isRedisUrl("127.0.0.1:6379"), false);
  assert.equal(isRedisUrl("http://h:1"), false);
  assert.equal(isRedisUrl("redis://"), false);
});

test("an ACL user name with `:` and a password reach ioredis unchanged; stripping both leaves the server", () => {
  const url = withRedisCredentials("redis://h:1/2", "driftless:sync.rootsync.ns.n", "p@ss:w/rd%");
  const client = new Redis(url, { lazyConnect: true });
  assert.equal(client.options.username, "driftless:sync.rootsync.ns.n");
  assert.equal(client.options.password, "p@ss:w/rd%");
  client.disconnect();
  assert.equal(withoutRedisCredentials(url), "redis://h:1/2");
  assert.equal(redisPasswordOf(withRedisPassword("redis://h:1", "a%b")), "a%b");
});
