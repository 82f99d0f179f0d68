/**
 * What one sync costs in a running Redis, part by part (the density and redis-memory benchmarks):
 * its connections (`CLIENT LIST`: count and tot-mem per role), its keys (`MEMORY USAGE` of every key
 * under its queue prefix, by kind), its ACL user (a copy of each sync's user is made and removed
 * again; the used_memory difference is its cost), and `INFO memory`'s totals.
 */
import type { RedisConnection } from "@driftless/queue";

export interface RedisBreakdown {
  readonly info: Readonly<Record<string, number>>;
  /** Per role: connections and their summed tot-mem, query buffer, omem and reply buffer (rbs). */
  readonly clients: Readonly<Record<string, ClientGroup>>;
  /** Per kind of key under a sync's prefix: count and MEMORY USAGE, summed over all syncs. */
  readonly keys: Readonly<Record<string, KeyGroup>>;
  /** used_memory growth for one more ACL user with a sync's rules. */
  readonly aclUserBytes: number;
  readonly syncUsers: number;
}

export interface ClientGroup {
  count: number;
  totMem: number;
  qbuf: number;
  qbufFree: number;
  omem: number;
  rbs: number;
}

export interface KeyGroup {
  count: number;
  bytes: number;
}

const INFO_FIELDS = [
  "used_memory",
  "used_memory_dataset",
  "used_memory_overhead",
  "used_memory_scripts",
  "mem_clients_normal",
  "connected_clients",
] as const;

/** INFO memory's totals, MEMORY STATS's numeric fields (`stats.*`) and the slow log's length. */
export async function infoMemory(admin: RedisConnection): Promise<Record<string, number>> {
  const text = `${await admin.info("memory")}\n${await admin.info("clients")}`;
  const stats = (await admin.call("MEMORY", "STATS")) as unknown[];
  const statFields: [string, number][] = [];
  for (let i = 0; i + 1 < stats.length; i += 2)
    if (typeof stats[i + 1] === "number") statFields.push([`stats.${String(stats[i])}`, stats[i + 1] as number]);
  return {
    ...Object.fromEntries(
      INFO_FIELDS.map((field) => [field, Number(new RegExp(`^${field}:(\\d+)`, "m").exec(text)?.[1] ?? NaN)]),
    ),
    ...Object.fromEntries(statFields),
    slowlog: Number(await admin.call("SLOWLOG", "LEN")),
    aclLog: ((await admin.call("ACL", "LOG")) as unknown[]).length,
    keys: Number(await admin.dbsize()),
  };
}

/** A client's role, from its user and name (the connection names packages/queue gives). */
function roleOf(fields: Map<string, string>, prefix: string): string {
  const user = fields.get("user") ?? "";
  const name = fields.get("name") ?? "";
  const who = user.startsWith(`${prefix}:sync.`) ? "reconciler" : user === "default" ? "manager/admin" : user;
  if (name.endsWith(":worker")) return `${who}: worker`;
  if (name.endsWith(":reconciler")) return `${who}: queue and worker`;
  if (name.startsWith(`${prefix}:`)) return `${who}: worker blocking`;
  return `${who}: ${name === "" ? "unnamed" : name}`;
}

/** The kind of a key after `<prefix>:<queue>:`: job hashes and locks by shape, the rest by name. */
function keyKind(rest: string): string {
  if (/^[0-9a-f-]{36}$/.test(rest) || /^\d+$/.test(rest)) return "job";
  if (/^([0-9a-f-]{36}|\d+):lock$/.test(rest)) return "job lock";
  if (/^([0-9a-f-]{36}|\d+):logs$/.test(rest)) return "job logs";
  if (rest.startsWith("de:")) return "de-duplication";
  return rest;
}

export async function redisBreakdown(admin: RedisConnection, prefix: string): Promise<RedisBreakdown> {
  const clients: Record<string, ClientGroup> = {};
  for (const line of String(await admin.call("CLIENT", "LIST")).split("\n")) {
    if (line.trim() === "") continue;
    const fields = new Map(line.split(" ").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
    const group = (clients[roleOf(fields, prefix)] ??= { count: 0, totMem: 0, qbuf: 0, qbufFree: 0, omem: 0, rbs: 0 });
    group.count++;
    group.totMem += Number(fields.get("tot-mem") ?? 0);
    group.qbuf += Number(fields.get("qbuf") ?? 0);
    group.qbufFree += Number(fields.get("qbuf-free") ?? 0);
    group.omem += Number(fields.get("omem") ?? 0);
    group.rbs += Number(fields.get("rbs") ?? 0);
  }
  const keys: Record<string, KeyGroup> = {};
  const queuePrefix = `${prefix}:`;
  let cursor = "0";
  do {
    const [next, batch] = (await admin.scan(cursor, "MATCH", `${queuePrefix}*`, "COUNT", 1000)) as [string, string[]];
    cursor = next;
    for (const key of batch) {
      const rest = key.slice(queuePrefix.length);
      const queue = rest.slice(0, rest.indexOf(":"));
      const kind = `${queue.startsWith("sync.") ? "sync" : queue}: ${keyKind(rest.slice(queue.length + 1))}`;
      const group = (keys[kind] ??= { count: 0, bytes: 0 });
      group.count++;
      group.bytes += Number(await admin.call("MEMORY", "USAGE", key, "SAMPLES", "0"));
    }
  } while (cursor !== "0");
  const users = ((await admin.call("ACL", "LIST")) as string[]).filter((u) => u.startsWith(`user ${prefix}:sync.`));
  let aclUserBytes = NaN;
  const sample = users[0];
  if (sample !== undefined) {
    // The same rules under another name, so no reconciler is disturbed.
    const rules = sample.split(" ").slice(2);
    const before = (await infoMemory(admin))["used_memory"] ?? 0;
    const probes = 50;
    for (let i = 0; i < probes; i++) await admin.call("ACL", "SETUSER", `bench-probe-${i}`, ...rules);
    const after = (await infoMemory(admin))["used_memory"] ?? 0;
    for (let i = 0; i < probes; i++) await admin.call("ACL", "DELUSER", `bench-probe-${i}`);
    aclUserBytes = (after - before) / probes;
  }
  return { info: await infoMemory(admin), clients, keys, aclUserBytes, syncUsers: users.length };
}

const kib = (bytes: number): string => (bytes / 1024).toFixed(1);

/** Markdown lines: per sync (totals over `syncs`), for a benchmark's report. */
export function breakdownLines(b: RedisBreakdown, syncs: number, before: Readonly<Record<string, number>>): string[] {
  const grow = (field: string): number => ((b.info[field] ?? 0) - (before[field] ?? 0)) / syncs;
  const lines = [
    `| Redis, per sync (${syncs} syncs) | KiB | detail |`,
    "| --- | ---: | --- |",
    `| used_memory growth | ${kib(grow("used_memory"))} | dataset ${kib(grow("used_memory_dataset"))}, overhead ${kib(grow("used_memory_overhead"))}, scripts ${kib(grow("used_memory_scripts"))} |`,
    `| MEMORY STATS growth | ${kib(grow("stats.overhead.total"))} overhead | ${Object.keys(b.info)
      .filter((k) => k.startsWith("stats.") && Math.abs(grow(k)) * syncs >= 16 * 1024)
      .map((k) => `${k.slice(6)} ${kib(grow(k))}`)
      .join(", ")}; slow log ${b.info["slowlog"]}, ACL log ${b.info["aclLog"]} entries; ${b.info["keys"]} keys |`,
    `| mem_clients_normal growth | ${kib(grow("mem_clients_normal"))} | connected_clients ${b.info["connected_clients"]} (before ${before["connected_clients"]}) |`,
  ];
  for (const [role, g] of Object.entries(b.clients).sort())
    lines.push(
      `| clients ${role} | ${kib(g.totMem / syncs)} | ${g.count} connection(s), ${(g.count / syncs).toFixed(2)} per sync; tot-mem ${kib(g.totMem / g.count)} KiB each (qbuf ${kib(g.qbuf / g.count)}, qbuf-free ${kib(g.qbufFree / g.count)}, reply buffer ${kib(g.rbs / g.count)}, omem ${kib(g.omem / g.count)}) |`,
    );
  for (const [kind, g] of Object.entries(b.keys).sort())
    lines.push(
      `| key ${kind} | ${kib(g.bytes / syncs)} | ${(g.count / syncs).toFixed(2)} per sync, ${Math.round(g.bytes / g.count)} B each |`,
    );
  lines.push(`| ACL user | ${kib(b.aclUserBytes)} | ${b.syncUsers} sync users |`, "");
  return lines;
}

/** used_memory with no client left, then also without the syncs' ACL users, then without scripts. */
export interface RedisRemainder {
  readonly noClients: number;
  readonly noUsers: number;
  readonly noScripts: number;
}

/** Deletes the syncs' ACL users and flushes the script cache: run it last, once nothing uses Redis. */
export async function redisRemainder(admin: RedisConnection, prefix: string): Promise<RedisRemainder> {
  const used = async (): Promise<number> => (await infoMemory(admin))["used_memory"] ?? 0;
  // Redis frees a closed client at once; the admin connection is the only one left.
  const noClients = await used();
  for (const user of (await admin.call("ACL", "USERS")) as string[])
    if (user.startsWith(`${prefix}:sync.`)) await admin.call("ACL", "DELUSER", user);
  const noUsers = await used();
  await admin.call("SCRIPT", "FLUSH", "SYNC");
  return { noClients, noUsers, noScripts: await used() };
}

export function remainderLines(
  up: Readonly<Record<string, number>>,
  left: RedisRemainder,
  before: Readonly<Record<string, number>>,
  syncs: number,
): string[] {
  const per = (bytes: number): string => kib(bytes / syncs);
  const start = before["used_memory"] ?? 0;
  return [
    `| Redis once every process stopped, per sync | KiB | |`,
    "| --- | ---: | --- |",
    `| connections (used_memory drop when they closed) | ${per((up["used_memory"] ?? 0) - left.noClients)} | |`,
    `| ACL users | ${per(left.noClients - left.noUsers)} | |`,
    `| BullMQ's scripts | ${per(left.noUsers - left.noScripts)} | once per server |`,
    `| the rest (keys and whatever else) | ${per(left.noScripts - start)} | |`,
    "",
  ];
}
