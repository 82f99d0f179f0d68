import assert from "node:assert/strict";
import { it } from "node:test";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { Operation, PruneOperation, type ApplyOutcome, type DesiredObject } from "@driftless/applier";
import { createMetrics } from "@driftless/metrics";
import { initPassMetrics, recordCorrectionInternalError, recordPass } from "./pass-metrics.ts";

function desired(name: string): DesiredObject {
  const id = { group: "", kind: "ConfigMap", namespace: "web", name };
  const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "web" } };
  return { id, apiVersion: "v1", object, sourcePath: `${name}.yaml`, sourceHash: name, dependsOn: [] };
}

void it('records every apply of a pass as operation="update", a create too, as Config Sync\'s applier does; deletes as "delete", a detach as "unmanage"', async () => {
  const metrics = createMetrics({ processMetrics: false });
  const failure = new DriftlessError({ code: KnvCode.ApiServer, errorClass: ErrorClass.Retry, message: "refused" });
  const applied: ApplyOutcome[] = [
    { desired: desired("new"), operation: Operation.Created },
    { desired: desired("changed"), operation: Operation.Updated },
    { desired: desired("same"), operation: Operation.Unchanged },
    { desired: desired("refused"), operation: Operation.Failed, error: failure },
  ];
  const pruned = [
    { id: { group: "", kind: "ConfigMap", namespace: "web", name: "gone" }, operation: PruneOperation.Deleted },
    { id: { group: "", kind: "ConfigMap", namespace: "web", name: "kept" }, operation: PruneOperation.Detached },
  ];
  const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
  recordPass(
    metrics,
    identity,
    "poll",
    { commit: "abc", sourceErrors: [], syncErrors: [failure], synced: false, applied, pruned },
    1,
  );

  const text = await metrics.registry.getSingleMetricAsString("config_sync_apply_operations_total");
  const samples = text.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
  assert.deepEqual(samples.sort(), [
    'config_sync_apply_operations_total{operation="delete",status="success",controller="applier"} 1',
    'config_sync_apply_operations_total{operation="unmanage",status="success",controller="applier"} 1',
    'config_sync_apply_operations_total{operation="update",status="error",controller="applier"} 1',
    'config_sync_apply_operations_total{operation="update",status="success",controller="applier"} 2',
  ]);
});

void it("records, as Config Sync: a failed sync attempt in last_sync_timestamp, rendering errors in reconciler_errors, the reconciler's name in pipeline_error_observed", async () => {
  const metrics = createMetrics({ processMetrics: false });
  const failure = new DriftlessError({ code: KnvCode.Apply, errorClass: ErrorClass.Terminal, message: "refused" });
  const identity = { kind: "RepoSync", namespace: "web", name: "repo-sync" } as const;
  const lines = async (name: string): Promise<string[]> =>
    (await metrics.registry.getSingleMetricAsString(name))
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"));

  recordPass(
    metrics,
    identity,
    "poll",
    { commit: "abc", sourceErrors: [], syncErrors: [failure], synced: false, applied: [], pruned: [] },
    1,
  );
  assert.match((await lines("config_sync_last_sync_timestamp")).join("\n"), /\{status="error",commit="abc"\} \d+/);

  const rendering = { message: "Rendering failed", errors: [failure] };
  recordPass(
    metrics,
    identity,
    "poll",
    { commit: "def", sourceErrors: [], syncErrors: [], synced: false, applied: [], pruned: [], rendering },
    1,
  );
  assert.ok(
    (await lines("config_sync_reconciler_errors")).includes(
      'config_sync_reconciler_errors{component="rendering",errorclass="2xxx"} 1',
    ),
  );
  assert.ok(
    (await lines("config_sync_pipeline_error_observed")).includes(
      'config_sync_pipeline_error_observed{name="ns-reconciler-web",reconciler="repo-sync",component="rendering"} 1',
    ),
  );
});

void it("records internal errors under the sources Config Sync's reconciler has, parser and remediator, from the start at 0; never applier", async () => {
  const metrics = createMetrics({ processMetrics: false });
  const internal = new DriftlessError({ code: KnvCode.Internal, errorClass: ErrorClass.Retry, message: "a bug" });
  const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
  const samples = async (): Promise<string[]> =>
    (await metrics.registry.getSingleMetricAsString("config_sync_internal_errors_total"))
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"))
      .sort();

  initPassMetrics(metrics);
  assert.deepEqual(await samples(), [
    'config_sync_internal_errors_total{source="parser"} 0',
    'config_sync_internal_errors_total{source="remediator"} 0',
  ]);

  // A pass's own internal error is a sync error (reconciler_errors' 9xxx class), not an internal error source.
  recordPass(
    metrics,
    identity,
    "poll",
    { commit: "abc", sourceErrors: [internal], syncErrors: [internal], synced: false, applied: [], pruned: [] },
    1,
  );
  // A correction that threw, or failed as internal; an ordinary failure is not one.
  recordCorrectionInternalError(metrics, "threw");
  recordCorrectionInternalError(metrics, { error: internal });
  recordCorrectionInternalError(metrics, {
    error: new DriftlessError({ code: KnvCode.Apply, errorClass: ErrorClass.Retry, message: "refused" }),
  });
  assert.deepEqual(await samples(), [
    'config_sync_internal_errors_total{source="parser"} 1',
    'config_sync_internal_errors_total{source="remediator"} 2',
  ]);
});
