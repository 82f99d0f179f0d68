/**
 * The alerts in manifests/monitoring: promtool (Debian's prometheus package, which the test set-up
 * installs) checks the rule file and runs its unit tests, and the PrometheusRule shipped for the
 * Operator carries exactly the same groups.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFile, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { findRepoRoot } from "@driftless/local-cluster";
import { removeAfter } from "../../support/index.ts";

const dir = join(findRepoRoot(), "manifests", "monitoring");
const rulesFile = "driftless.rules.yaml";
const rulesTestFile = "driftless.rules.test.yaml";

function promtool(args: readonly string[], cwd: string): { ok: boolean; output: string } {
  const which = spawnSync("sh", ["-c", "command -v promtool"], { encoding: "utf8" });
  const binary = which.stdout.trim();
  // Fails (never skips): a missing promtool would otherwise leave the alerts unchecked in CI.
  if (binary === "") throw new Error("promtool is not installed (apt-get install prometheus)");
  const run = spawnSync(binary, args, { cwd, encoding: "utf8" });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

interface RuleFile {
  readonly groups: readonly { readonly name: string; readonly rules: readonly Record<string, unknown>[] }[];
}

test("promtool check rules accepts manifests/monitoring/driftless.rules.yaml", () => {
  const run = promtool(["check", "rules", rulesFile], dir);
  assert.ok(run.ok, run.output);
});

test("promtool's unit tests fire every alert in driftless.rules.yaml on a synthetic series", async () => {
  const run = promtool(["test", "rules", rulesTestFile], dir);
  assert.ok(run.ok, run.output);
  // Each alert is the subject of at least one alert_rule_test.
  const rules = parse(await readFile(join(dir, rulesFile), "utf8")) as RuleFile;
  const tests = parse(await readFile(join(dir, rulesTestFile), "utf8")) as {
    tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
  };
  const fired = new Set(
    tests.tests.flatMap((t) =>
      (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
    ),
  );
  const alerts = rules.groups.flatMap((g) =>
    g.rules.flatMap((r) => (typeof r["alert"] === "string" ? [r["alert"]] : [])),
  );
  assert.ok(alerts.length > 0);
  assert.deepEqual(
    alerts.filter((a) => !fired.has(a)),
    [],
    "alerts no unit test expects to fire",
  );
});

test("the unit tests catch a broken alert: a threshold moved makes promtool test rules fail", async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), "driftless-rules-"));
  removeAfter(t, scratch);
  const rules = await readFile(join(dir, rulesFile), "utf8");
  const broken = rules.replace('{status="success"}) > 1800', '{status="success"}) > 3600');
  assert.notEqual(broken, rules, "the stale-sync threshold to break was not found");
  await writeFile(join(scratch, rulesFile), broken);
  await copyFile(join(dir, rulesTestFile), join(scratch, rulesTestFile));
  const run = promtool(["test", "rules", rulesTestFile], scratch);
  assert.equal(run.ok, false, "promtool test rules passed with a broken rule");
  assert.match(run.output, /DriftlessSyncStale/);
});

test("the PrometheusRule in manifests/monitoring carries exactly the groups of driftless.rules.yaml", async () => {
  const rules = parse(await readFile(join(dir, rulesFile), "utf8")) as RuleFile;
  const resource = parse(await readFile(join(dir, "prometheus-rule.yaml"), "utf8")) as {
    apiVersion: string;
    kind: string;
    spec: RuleFile;
  };
  assert.equal(resource.apiVersion, "monitoring.coreos.com/v1");
  assert.equal(resource.kind, "PrometheusRule");
  assert.deepEqual(resource.spec.groups, rules.groups);
});

test("the monitoring folder stays out of the main kustomization (no PrometheusRule CRD there) and lists its own files", async () => {
  const root = parse(await readFile(join(findRepoRoot(), "manifests", "kustomization.yaml"), "utf8")) as {
    resources: string[];
  };
  assert.ok(
    !root.resources.some((r) => r.startsWith("monitoring")),
    "manifests/kustomization.yaml includes monitoring",
  );
  const own = parse(await readFile(join(dir, "kustomization.yaml"), "utf8")) as { resources: string[] };
  assert.deepEqual([...own.resources].sort(), ["grafana-dashboard.yaml", "prometheus-rule.yaml"]);
});

test("every metric an alert reads is one driftless registers (no invented series)", async () => {
  const { createManagerMetrics, createMetrics } = await import("@driftless/metrics");
  // A reconciler's registry and the manager's: an alert may read either.
  const registered = new Set(
    [
      ...(await createMetrics().registry.getMetricsAsJSON()),
      ...(await createManagerMetrics().registry.getMetricsAsJSON()),
    ].map((m) => m.name),
  );
  const rules = parse(await readFile(join(dir, rulesFile), "utf8")) as RuleFile;
  const used = rules.groups.flatMap((g) =>
    g.rules.flatMap((r) =>
      [...String(r["expr"]).matchAll(/\b(?:config_sync|driftless|process|nodejs)_\w+/g)].map((m) => m[0]),
    ),
  );
  assert.ok(used.length > 0);
  assert.deepEqual(
    used.filter((name) => !registered.has(name) && !registered.has(name.replace(/_(bucket|count|sum)$/, ""))),
    [],
    "alerts read metrics driftless does not register",
  );
});
