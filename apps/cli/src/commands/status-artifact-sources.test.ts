import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import { render, OutputFormat } from "./status-render.ts";
import { syncReport, SyncState } from "../sync-report.ts";

const digest = "4c".repeat(32);

const sync = (spec: object, status: object): KubeObject =>
  ({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system", generation: 1 },
    spec,
    status,
  }) as KubeObject;

const synced = (commit: string, block: object): object => ({
  observedGeneration: 1,
  lastSyncedCommit: commit,
  source: { ...block, commit },
  rendering: { ...block, commit, message: "Rendering skipped" },
  sync: { ...block, commit },
  conditions: [{ type: "Syncing", status: "False", reason: "Sync", message: "Sync Completed", commit }],
});

test("an OCI sync shows its image and dir, and the image digest as its commits, as nomos status does", () => {
  const image = "registry.example:5000/config/app:stable";
  const report = syncReport(
    sync(
      { sourceType: "oci", oci: { image, dir: "prod", auth: "none" } },
      synced(digest, { ociStatus: { image, dir: "prod" } }),
    ),
  );
  assert.equal(report.source.display, `${image}/prod`);
  assert.equal(report.state, SyncState.Synced);
  assert.equal(report.commits.lastSynced, digest);
  assert.match(render([report], OutputFormat.Text), /registry\.example:5000\/config\/app:stable\/prod/);
});

test("a Helm sync shows repo, chart and version, and the chart version as its commits", () => {
  const report = syncReport(
    sync(
      { sourceType: "helm", helm: { repo: "https://charts.example", chart: "web", version: "^1.0.0", auth: "none" } },
      synced("1.2.0", { helmStatus: { repo: "https://charts.example", chart: "web", version: "1.2.0" } }),
    ),
  );
  assert.equal(report.source.display, "https://charts.example/web@^1.0.0");
  assert.equal(report.state, SyncState.Synced);
  assert.equal(report.commits.sync, "1.2.0");
});
