/** Shared pieces of the queue integration tests: an isolated prefix per test, gates, connections. */
import type { TestContext } from "node:test";
import { closeRedisConnection, createRedisConnection, type RedisConnection, type SyncRef } from "@driftless/queue";
import { suffix, testEnv } from "../../support/index.ts";

/** A BullMQ prefix no other test uses, so tests never see each other's jobs. */
export function testPrefix(): string {
  return `test-${suffix()}${suffix()}`;
}

export function testSync(name = `sync-${suffix()}`): SyncRef {
  return { kind: "RepoSync", namespace: `ns-${suffix()}`, name };
}

/** A producer connection to the test Redis, closed when the test ends. Logs are collected, not printed. */
export function testConnection(t: TestContext, logs: string[] = []): RedisConnection {
  const connection = createRedisConnection(testEnv().redisUrl, { log: (line) => logs.push(line) });
  t.after(() => closeRedisConnection(connection));
  return connection;
}

/** A promise the test resolves when it chooses: holds a processor inside its pass. */
export interface Gate {
  readonly promise: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
