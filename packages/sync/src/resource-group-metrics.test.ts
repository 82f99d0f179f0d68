import assert from "node:assert/strict";
import { it } from "node:test";
import type { ResourceStatusEntry } from "@driftless/applier";
import { createMetrics } from "@driftless/metrics";
import { readinessFailed, recordResourceGroupMetrics } from "./resource-group-metrics.ts";

function entry(group: string, status: string): ResourceStatusEntry {
  return {
    group,
    kind: "Thing",
    namespace: "web",
    name: `${group}-${status}`,
    status,
    strategy: "Apply",
    actuation: "Succeeded",
    reconcile: "Succeeded",
  };
}

void it("a readiness error is any Failed entry, or a Config Connector entry that is not Current, as Config Sync's ResourceGroup controller decides", () => {
  const kcc = "sql.cnrm.cloud.google.com";
  assert.equal(readinessFailed([]), false);
  assert.equal(readinessFailed([entry("apps", "Current"), entry("", "InProgress"), entry("", "NotFound")]), false);
  assert.equal(readinessFailed([entry("", "Unknown"), entry("", "Terminating"), entry(kcc, "Current")]), false);
  assert.equal(readinessFailed([entry("apps", "Current"), entry("apps", "Failed")]), true);
  for (const status of ["InProgress", "NotFound", "Unknown", "Terminating", "Failed"])
    assert.equal(readinessFailed([entry(kcc, status)]), true, `a Config Connector entry ${status}`);
});

void it('records pipeline_error_observed{component="readiness"} with the reconciler\'s name and type, 1 while an entry fails and 0 after', async () => {
  const metrics = createMetrics({ processMetrics: false });
  const identity = { kind: "RepoSync", namespace: "team-a", name: "tenant" } as const;
  const readiness = async (): Promise<string[]> =>
    (await metrics.registry.getSingleMetricAsString("config_sync_pipeline_error_observed"))
      .split("\n")
      .filter((line) => line.includes('component="readiness"'));
  recordResourceGroupMetrics(metrics, identity, [entry("apps", "Failed")], 100);
  assert.deepEqual(await readiness(), [
    'config_sync_pipeline_error_observed{name="ns-reconciler-team-a-tenant-6",reconciler="repo-sync",component="readiness"} 1',
  ]);
  recordResourceGroupMetrics(metrics, identity, [entry("apps", "Current")], 100);
  assert.deepEqual(await readiness(), [
    'config_sync_pipeline_error_observed{name="ns-reconciler-team-a-tenant-6",reconciler="repo-sync",component="readiness"} 0',
  ]);
});
