/**
 * What a running reconciler holds in Redis: its connections, all under its own ACL user. Redis 7.0
 * gives each connection a 16 KiB query buffer while it talks, so the count is most of what a sync
 * costs there (docs/design/manager.md, "Redis").
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeRedisConnection, createRedisConnection, syncQueueName } from "@driftless/queue";
import { testEnv } from "../../support/index.ts";
import { startManager, syncedRootSync, systemNamespace } from "./helpers.ts";

test("a synced reconciler reaches Redis over two connections, both as its own user: its queue and worker's, and BullMQ's blocking fetch", async (t) => {
  const manager = await startManager(t);
  const { name } = await syncedRootSync(t, manager, { namespacePrefix: "conns", object: "cm" });
  const username = `${manager.scope.queuePrefix}:${syncQueueName({ kind: "RootSync", namespace: systemNamespace, name })}`;
  const look = createRedisConnection(testEnv().redisUrl, { role: "worker", log: () => undefined });
  t.after(() => closeRedisConnection(look));

  const clients = String(await look.call("CLIENT", "LIST"))
    .trim()
    .split("\n")
    .filter((line) => line.includes(` user=${username} `));
  assert.equal(clients.length, 2, clients.join("\n"));
});
