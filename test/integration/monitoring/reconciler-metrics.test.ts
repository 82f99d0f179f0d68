/**
 * What a reconciler's /metrics carries as Config Sync's does, on the real control plane, Redis and git:
 * a sample for every metric after a sync and an error alone (no drift corrected).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRepoSync, eventually, startReconciler, testNamespace, TestRepo } from "../../support/index.ts";
import { configMap } from "../manager/helpers.ts";
import { fullScrape, scrape, valueOf } from "./scrape.ts";

test("every metric a reconciler registers has a sample after a sync and an error, with no drift ever corrected", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  await repo.commit("one config map");
  await createRepoSync(namespace, repo, { git: { period: "2s" } });
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" }, { metricsPort: 0 });
  assert.ok(reconciler.metricsUrl !== undefined);
  const url = `${reconciler.metricsUrl}/metrics`;
  await eventually(async () => valueOf(await scrape(url), "config_sync_last_sync_timestamp", { status: "success" }), {
    timeoutMs: 30_000,
    what: "the first commit synced",
  });
  await repo.write("config/bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n");
  await repo.commit("a file that does not parse");
  await eventually(
    async () => valueOf(await scrape(url), "config_sync_pipeline_error_observed", { component: "source" }) === 1,
    { timeoutMs: 30_000, what: "the source error observed" },
  );
  const scraped = await fullScrape(url, "the reconciler");
  assert.equal(valueOf(scraped, "config_sync_remediate_duration_seconds_count", { status: "success" }), 0);
});
