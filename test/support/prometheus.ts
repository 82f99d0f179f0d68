import { spawnSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { freeLoopbackPort, startProcess, stopProcess, tailLog } from "@driftless/local-cluster";
import { eventually } from "./eventually.ts";
import { removeQuietly } from "./cleanup.ts";

export interface PrometheusServer {
  readonly url: string;
  /** Runs an instant PromQL query and returns the result vector. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
}

/**
 * A real Prometheus (Debian's package) scraping `targets` every second, stopped when the test ends.
 * Fails (never skips) when prometheus is not installed: .ci/run installs it.
 */
export async function startPrometheus(t: TestContext, targets: readonly string[]): Promise<PrometheusServer> {
  const which = spawnSync("sh", ["-c", "command -v prometheus"], { encoding: "utf8" });
  const binary = which.stdout.trim();
  if (binary === "") throw new Error("prometheus is not installed (apt-get install prometheus)");
  const dir = await mkdtemp(join(tmpdir(), "driftless-prometheus-"));
  const port = await freeLoopbackPort();
  const config = join(dir, "prometheus.yml");
  await writeFile(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      "scrape_configs:",
      "  - job_name: driftless",
      "    static_configs:",
      `      - targets: [${targets.map((target) => JSON.stringify(target)).join(", ")}]`,
      "",
    ].join("\n"),
  );
  const proc = await startProcess({
    name: "prometheus",
    binary,
    logFile: join(dir, "prometheus.log"),
    detached: false,
    args: [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
  });
  t.after(async () => {
    await stopProcess(proc.pid);
    await removeQuietly(dir);
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => (await fetch(`${url}/-/ready`)).ok, {
    what: `prometheus ready (log: ${await tailLog(proc.logFile)})`,
    timeoutMs: 30_000,
  });
  return {
    url,
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as {
        status: string;
        data?: { result?: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== "success") throw new Error(`prometheus query failed: ${JSON.stringify(body)}`);
      return body.data?.result ?? [];
    },
  };
}
