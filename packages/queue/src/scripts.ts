/**
 * BullMQ's Lua scripts, loaded into Redis's script cache by the manager. A reconciler's Redis user may run only
 * scripts already there (EVALSHA): EVAL and SCRIPT LOAD would let a leaked reconciler credential run any Lua,
 * and `while true do end` holds Redis, every sync's queue with it, until an administrator kills the script.
 * ioredis sends EVALSHA first, so BullMQ never needs EVAL while the cache holds its scripts; Redis keeps no
 * scripts across a restart, so the manager loads them again at every connection.
 */
import * as bullmqScripts from "bullmq/dist/cjs/scripts/index.js";
import type { RedisConnection } from "./connection.ts";

interface LuaScript {
  readonly name: string;
  readonly content: string;
}

function isLuaScript(value: unknown): value is LuaScript {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { content?: unknown }).content === "string" &&
    typeof (value as { name?: unknown }).name === "string"
  );
}

/** Every script the installed BullMQ defines, as it hands them to ioredis. */
export const queueScripts: readonly LuaScript[] = Object.values(bullmqScripts as Record<string, unknown>).filter(
  isLuaScript,
);

/** Loads BullMQ's scripts into the script cache (SCRIPT LOAD is idempotent); returns how many. */
export async function loadQueueScripts(connection: RedisConnection): Promise<number> {
  const pipeline = connection.pipeline();
  for (const script of queueScripts) pipeline.script("LOAD", script.content);
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([error]) => error !== null);
  if (failed?.[0]) throw failed[0];
  return queueScripts.length;
}
