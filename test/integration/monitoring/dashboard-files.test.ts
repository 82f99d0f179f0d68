/**
 * The Grafana dashboard in manifests/monitoring: the sidecar's ConfigMap carries the same JSON, and
 * every panel queries only metrics driftless registers (test/e2e/dashboard-queries.test.ts runs them).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { createManagerMetrics, createMetrics } from "@driftless/metrics";
import { findRepoRoot } from "@driftless/local-cluster";

const dir = join(findRepoRoot(), "manifests", "monitoring");

interface Dashboard {
  readonly panels: readonly { readonly type: string; readonly title: string; readonly targets?: { expr: string }[] }[];
}

test("the grafana_dashboard ConfigMap holds exactly driftless-dashboard.json", async () => {
  const json = JSON.parse(await readFile(join(dir, "driftless-dashboard.json"), "utf8")) as Dashboard;
  const configMap = parse(await readFile(join(dir, "grafana-dashboard.yaml"), "utf8")) as {
    kind: string;
    metadata: { labels: Record<string, string> };
    data: Record<string, string>;
  };
  assert.equal(configMap.kind, "ConfigMap");
  assert.equal(configMap.metadata.labels["grafana_dashboard"], "1");
  assert.deepEqual(Object.keys(configMap.data), ["driftless.json"]);
  assert.deepEqual(JSON.parse(configMap.data["driftless.json"] ?? "{}"), json);
});

test("every dashboard panel has a query, and every query reads metrics driftless registers", async () => {
  const json = JSON.parse(await readFile(join(dir, "driftless-dashboard.json"), "utf8")) as Dashboard;
  // A reconciler's registry and the manager's: a panel may read either.
  const registered = new Set(
    [
      ...(await createMetrics().registry.getMetricsAsJSON()),
      ...(await createManagerMetrics().registry.getMetricsAsJSON()),
    ].map((m) => m.name),
  );
  const panels = json.panels.filter((p) => p.type !== "row");
  assert.deepEqual(
    panels.filter((p) => (p.targets ?? []).length === 0).map((p) => p.title),
    [],
    "panels without a query",
  );
  const unknown = panels.flatMap((p) =>
    (p.targets ?? []).flatMap((t) =>
      [...t.expr.matchAll(/\b(?:config_sync|driftless|process|nodejs)_\w+/g)]
        .map((m) => m[0])
        .filter((name) => !registered.has(name) && !registered.has(name.replace(/_(bucket|count|sum)$/, "")))
        .map((name) => `${p.title}: ${name}`),
    ),
  );
  assert.deepEqual(unknown, [], "panels query metrics driftless does not register");
});
