import assert from "node:assert/strict";
import { it } from "node:test";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { Operation, PruneOperation, type ApplyOutcome, type DesiredObject } from "@driftless/applier";
import { createMetrics } from "@driftless/metrics";
import { initPassMetrics, recordCorrection, recordCorrectionInternalError, recordPass } from "./pass-metrics.ts";

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

void it("keeps a stage's errors while a pass stops before it, as its block on status keeps them: a source error leaves the last apply's in reconciler_errors and pipeline_error_observed", async () => {
  const metrics = createMetrics({ processMetrics: false });
  const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
  const lines = async (name: string): Promise<string[]> =>
    (await metrics.registry.getSingleMetricAsString(name))
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"));
  const applyError = new DriftlessError({ code: KnvCode.Apply, errorClass: ErrorClass.Terminal, message: "refused" });
  const sourceError = new DriftlessError({ code: "KNV1006", errorClass: ErrorClass.Terminal, message: "bad yaml" });
  const rendering = { message: "Rendering succeeded", errors: [] };
  const pass = { sourceErrors: [], syncErrors: [], synced: false, applied: [], pruned: [], rendering };
  recordPass(metrics, identity, "poll", { ...pass, commit: "a", syncErrors: [applyError] }, 1);
  // The next commit's source does not parse: status.sync still lists commit a's apply error.
  recordPass(metrics, identity, "poll", { ...pass, commit: "b", sourceErrors: [sourceError] }, 1);
  const errors = await lines("config_sync_reconciler_errors");
  assert.ok(errors.includes('config_sync_reconciler_errors{component="sync",errorclass="2xxx"} 1'), errors.join("\n"));
  assert.ok(
    errors.includes('config_sync_reconciler_errors{component="source",errorclass="1xxx"} 1'),
    errors.join("\n"),
  );
  const observed = await lines("config_sync_pipeline_error_observed");
  const labels = 'name="root-reconciler",reconciler="root-sync"';
  assert.ok(
    observed.includes(`config_sync_pipeline_error_observed{${labels},component="sync"} 1`),
    observed.join("\n"),
  );
  assert.ok(observed.includes(`config_sync_pipeline_error_observed{${labels},component="source"} 1`));

  // A fetch that fails (no rendering this pass) keeps status.rendering, and its metrics too.
  const renderError = new DriftlessError({ code: "KNV1068", errorClass: ErrorClass.Terminal, message: "build" });
  recordPass(
    metrics,
    identity,
    "poll",
    { ...pass, commit: "c", rendering: { message: "x", errors: [renderError] } },
    1,
  );
  const { rendering: _none, ...unfetched } = pass;
  recordPass(metrics, identity, "poll", { ...unfetched, commit: undefined, sourceErrors: [sourceError] }, 1);
  assert.ok(
    (await lines("config_sync_pipeline_error_observed")).includes(
      `config_sync_pipeline_error_observed{${labels},component="rendering"} 1`,
    ),
  );

  // The source fixed and commit d applied: every stage says 0 again.
  recordPass(metrics, identity, "poll", { ...pass, commit: "d", synced: true }, 1);
  assert.deepEqual(
    (await lines("config_sync_pipeline_error_observed")).filter((l) => l.endsWith(" 1")),
    [],
  );
});

void it("records a sync attempt whose only source errors are objects set aside for their kind (the rest applied) as an error of its commit", async () => {
  const metrics = createMetrics({ processMetrics: false });
  const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
  const setAside = new DriftlessError({ code: "KNV1021", errorClass: ErrorClass.Terminal, message: "unknown kind" });
  recordPass(
    metrics,
    identity,
    "poll",
    {
      commit: "a",
      sourceErrors: [setAside],
      reachedApply: true,
      syncErrors: [],
      synced: false,
      applied: [],
      pruned: [],
    },
    1,
  );
  assert.match(
    await metrics.registry.getSingleMetricAsString("config_sync_last_sync_timestamp"),
    /\{status="error",commit="a"\} \d+/,
  );
});

void it("counts another sync's object (KNV1060) as a resource conflict, not as a failed apply operation: Config Sync's applier skips it and records no operation", async () => {
  const metrics = createMetrics({ processMetrics: false });
  const identity = { kind: "RepoSync", namespace: "web", name: "repo-sync" } as const;
  const conflict = new DriftlessError({
    code: KnvCode.ManagementConflict,
    errorClass: ErrorClass.Terminal,
    message: "managed by another sync",
  });
  const applied: ApplyOutcome[] = [
    { desired: desired("mine"), operation: Operation.Created },
    { desired: desired("theirs"), operation: Operation.Failed, error: conflict },
  ];
  recordPass(
    metrics,
    identity,
    "poll",
    { commit: "a", sourceErrors: [], syncErrors: [conflict], reachedApply: true, synced: false, applied, pruned: [] },
    1,
  );
  const samples = async (name: string): Promise<string[]> =>
    (await metrics.registry.getSingleMetricAsString(name))
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"));
  assert.deepEqual(await samples("config_sync_apply_operations_total"), [
    'config_sync_apply_operations_total{operation="update",status="success",controller="applier"} 1',
  ]);
  assert.deepEqual(await samples("config_sync_resource_conflicts_total"), [
    'config_sync_resource_conflicts_total{commit="a"} 1',
  ]);
});

void it("keeps the applied commit's resource_conflicts_total while later passes apply nothing (a fetch or parse error), as Config Sync counts against the commit it applied", async () => {
  const metrics = createMetrics({ processMetrics: false });
  const identity = { kind: "RepoSync", namespace: "web", name: "repo-sync" } as const;
  const conflict = new DriftlessError({
    code: KnvCode.ManagementConflict,
    errorClass: ErrorClass.Terminal,
    message: "managed by another sync",
  });
  const applied: ApplyOutcome[] = [{ desired: desired("theirs"), operation: Operation.Failed, error: conflict }];
  const pass = { sourceErrors: [], syncErrors: [], synced: false, applied: [], pruned: [] };
  recordPass(
    metrics,
    identity,
    "poll",
    { ...pass, commit: "a", syncErrors: [conflict], reachedApply: true, applied },
    1,
  );
  const parseError = new DriftlessError({ code: "KNV1006", errorClass: ErrorClass.Terminal, message: "bad yaml" });
  recordPass(metrics, identity, "poll", { ...pass, commit: "b", sourceErrors: [parseError] }, 1);
  const fetchError = new DriftlessError({ code: "KNV2004", errorClass: ErrorClass.Retry, message: "no branch" });
  recordPass(metrics, identity, "poll", { ...pass, commit: undefined, sourceErrors: [fetchError] }, 1);
  const samples = (await metrics.registry.getSingleMetricAsString("config_sync_resource_conflicts_total"))
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"));
  assert.deepEqual(samples, ['config_sync_resource_conflicts_total{commit="a"} 1']);
});

void it("records apply_duration_seconds and last_apply_timestamp for an apply of no objects (an empty directory), as Config Sync's applier records every run", async () => {
  const metrics = createMetrics({ processMetrics: false });
  const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
  recordPass(
    metrics,
    identity,
    "poll",
    {
      commit: "empty",
      sourceErrors: [],
      syncErrors: [],
      reachedApply: true,
      synced: true,
      applied: [],
      pruned: [],
      declared: [],
      phases: { fetch: 0.1, read: 0.01, plan: 0.001, apply: 0.002, prune: 0.001, inventory: 0.003 },
    },
    1,
  );
  const samples = async (name: string): Promise<string[]> =>
    (await metrics.registry.getSingleMetricAsString(name))
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"));
  assert.ok(
    (await samples("config_sync_apply_duration_seconds")).includes(
      'config_sync_apply_duration_seconds_count{status="success",commit="empty"} 1',
    ),
  );
  assert.match(
    (await samples("config_sync_last_apply_timestamp")).join("\n"),
    /\{status="success",commit="empty"\} \d+/,
  );
});

void it('records a drift correction the API server refused as apply_operations_total{controller="remediator",status="error"} with the write it sent, as Config Sync\'s remediator records every create and update', async () => {
  const metrics = createMetrics({ processMetrics: false });
  const refused = new DriftlessError({ code: KnvCode.Apply, errorClass: ErrorClass.Terminal, message: "denied" });
  recordCorrection(metrics, { desired: desired("changed"), operation: Operation.Updated }, 0.01);
  recordCorrection(metrics, { desired: desired("gone"), operation: Operation.Created }, 0.01);
  recordCorrection(metrics, { desired: desired("same"), operation: Operation.Unchanged }, 0.01);
  recordCorrection(
    metrics,
    { desired: desired("denied"), operation: Operation.Failed, error: refused, attempted: "update" },
    0.01,
  );
  recordCorrection(
    metrics,
    { desired: desired("denied-create"), operation: Operation.Failed, error: refused, attempted: "create" },
    0.01,
  );
  // Refused before any write (another sync's object): no operation.
  recordCorrection(metrics, { desired: desired("theirs"), operation: Operation.Failed, error: refused }, 0.01);
  const samples = async (name: string): Promise<string[]> =>
    (await metrics.registry.getSingleMetricAsString(name))
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"));
  assert.deepEqual((await samples("config_sync_apply_operations_total")).sort(), [
    'config_sync_apply_operations_total{operation="create",status="error",controller="remediator"} 1',
    'config_sync_apply_operations_total{operation="create",status="success",controller="remediator"} 1',
    'config_sync_apply_operations_total{operation="update",status="error",controller="remediator"} 1',
    'config_sync_apply_operations_total{operation="update",status="success",controller="remediator"} 1',
  ]);
  const durations = await samples("config_sync_remediate_duration_seconds");
  assert.ok(
    durations.includes('config_sync_remediate_duration_seconds_count{status="success"} 3'),
    durations.join("\n"),
  );
  assert.ok(durations.includes('config_sync_remediate_duration_seconds_count{status="error"} 3'), durations.join("\n"));
});

void it("records of a pass cut short by a new spec only the writes it sent: no sync or apply attempt of its commit, which it neither finished nor reported on status", async () => {
  const metrics = createMetrics({ processMetrics: false });
  const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
  const applied: ApplyOutcome[] = [{ desired: desired("new"), operation: Operation.Created }];
  recordPass(
    metrics,
    identity,
    "poll",
    {
      commit: "old",
      sourceErrors: [],
      syncErrors: [],
      reachedApply: true,
      synced: false,
      applied,
      pruned: [],
      phases: { fetch: 0.1, read: 0.1, apply: 0.2 },
      skipped: "superseded",
    },
    300,
  );
  const samples = async (name: string): Promise<string[]> =>
    (await metrics.registry.getSingleMetricAsString(name))
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"));
  assert.deepEqual(await samples("config_sync_apply_operations_total"), [
    'config_sync_apply_operations_total{operation="update",status="success",controller="applier"} 1',
  ]);
  assert.deepEqual(await samples("config_sync_last_sync_timestamp"), []);
  assert.deepEqual(await samples("config_sync_last_apply_timestamp"), []);
  assert.deepEqual(await samples("config_sync_resource_conflicts_total"), []);
  assert.ok(
    (await samples("config_sync_reconcile_duration_seconds")).every((line) => line.endsWith(" 0")),
    "a cut pass is no reconcile of either status",
  );
});

void it("records no parser_duration_seconds for a pass that failed to fetch, as Config Sync's parser never starts then", async () => {
  const metrics = createMetrics({ processMetrics: false });
  const unreachable = new DriftlessError({
    code: KnvCode.SourceFetch,
    errorClass: ErrorClass.Retry,
    message: "unreachable",
  });
  const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
  const failed = { sourceErrors: [unreachable], syncErrors: [], synced: false, applied: [], pruned: [] };
  recordPass(metrics, identity, "poll", { ...failed, commit: undefined, phases: { status: 0.01 } }, 1);
  const text = await metrics.registry.getSingleMetricAsString("config_sync_parser_duration_seconds");
  assert.deepEqual(
    text.split("\n").filter((line) => line.includes("_count{")),
    [],
  );

  recordPass(metrics, identity, "poll", { ...failed, commit: "abc", phases: { fetch: 0.2, read: 0.1 } }, 1);
  const after = await metrics.registry.getSingleMetricAsString("config_sync_parser_duration_seconds");
  assert.deepEqual(
    after
      .split("\n")
      .filter((line) => line.includes("_count{"))
      .sort(),
    [
      'config_sync_parser_duration_seconds_count{status="error",trigger="poll",source="parse"} 1',
      'config_sync_parser_duration_seconds_count{status="success",trigger="poll",source="read"} 1',
    ],
  );
});
