/**
 * What the stress and density benchmarks read from processes and servers: CPU and memory from /proc,
 * API requests by verb from a reconciler's own metrics, and the API server's watches and requests.
 */
import { execFileSync } from "node:child_process";
import { readFile, readdir } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import type { KubeClient } from "@driftless/kube";

/** CPU seconds a process has used so far (user + system), from /proc/PID/stat. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** VmHWM (peak) or VmRSS of a process, in MiB. */
export async function statusMiB(pid: number, field: "VmHWM" | "VmRSS"): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}

/**
 * Proportional set size in MiB: resident memory with pages shared between processes (Node's binary,
 * mapped by every reconciler) divided among them. What N processes cost is the sum of their PSS.
 */
export async function pssMiB(pid: number): Promise<number> {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => "");
  return Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024;
}

/** Processes whose command line contains every one of `parts` (NUL-separated argv). */
export async function pidsWith(...parts: string[]): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (parts.every((p) => cmdline.includes(p))) pids.push(Number(entry));
  }
  return pids;
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`bench: ${what} not within ${timeoutMs} ms`);
    await delay(intervalMs);
  }
}

/** API requests a reconciler made, by verb, from its config_sync_api_duration_seconds_count. */
export async function requestsByVerb(metricsPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const verbs = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith("config_sync_api_duration_seconds_count{")) continue;
    const verb = /operation="([^"]+)"/.exec(line)?.[1] ?? "?";
    verbs.set(verb, (verbs.get(verb) ?? 0) + Number(line.split(" ").at(-1)));
  }
  return verbs;
}

export const writeVerbs = ["create", "update", "patch", "delete", "apply"];

export function difference(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [verb, n] of after) if (n - (before.get(verb) ?? 0) > 0) out.set(verb, n - (before.get(verb) ?? 0));
  return out;
}

export const sumOf = (m: Map<string, number>, verbs: readonly string[] = [...m.keys()]): number =>
  verbs.reduce((sum, v) => sum + (m.get(v) ?? 0), 0);

export const verbCell = (m: Map<string, number>): string =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([verb, n]) => `${verb} ${n}`)
    .join(", ") || "none";

/**
 * The API server's own counters: open watches, and requests served by verb (by `verb resource` with
 * `byResource`, to tell which objects idle syncs read or write).
 */
export async function apiserverMetrics(
  client: KubeClient,
  byResource = false,
): Promise<{ watches: number; requests: Map<string, number> }> {
  const raw = await client.requestRaw({ method: "GET", path: "/metrics", accept: "text/plain" });
  const text = raw.body.toString("utf8");
  let watches = 0;
  const requests = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("apiserver_longrunning_requests{") && line.includes('verb="WATCH"'))
      watches += Number(line.split(" ").at(-1));
    if (line.startsWith("apiserver_request_total{")) {
      const verb = /verb="([^"]+)"/.exec(line)?.[1] ?? "?";
      const key = byResource ? `${verb} ${/resource="([^"]*)"/.exec(line)?.[1] ?? "?"}` : verb;
      requests.set(key, (requests.get(key) ?? 0) + Number(line.split(" ").at(-1)));
    }
  }
  return { watches, requests };
}

/** A bare remote and a work tree, as a team has: write files, commit, push. */
export class BenchRepo {
  readonly remote: string;
  readonly work: string;
  constructor(root: string, name: string) {
    this.remote = `${root}/${name}.git`;
    this.work = `${root}/${name}`;
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", this.remote]);
    execFileSync("git", ["init", "-q", "-b", "main", this.work]);
    this.git("remote", "add", "origin", this.remote);
  }
  get url(): string {
    return `file://${this.remote}`;
  }
  git(...args: string[]): string {
    return execFileSync(
      "git",
      ["-C", this.work, "-c", "user.name=bench", "-c", "user.email=bench@driftless.invalid", ...args],
      { encoding: "utf8" },
    ).trim();
  }
  /** Commits the work tree (allowing an empty commit) and pushes; returns the commit. */
  commitAndPush(message: string): string {
    this.git("add", "-A");
    this.git("commit", "-q", "--allow-empty", "-m", message);
    this.git("push", "-q", "origin", "main");
    return this.git("rev-parse", "HEAD");
  }
}

/** The machine's 1-minute load average, to print beside each figure on a shared machine. */
export async function loadAverage(): Promise<string> {
  return (await readFile("/proc/loadavg", "utf8")).split(" ")[0] ?? "?";
}
