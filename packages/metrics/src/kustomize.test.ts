import { test } from "node:test";
import assert from "node:assert/strict";
import { createMetrics } from "./create-metrics.ts";
import type { KustomizeUsage } from "./kustomize.ts";

const usage: KustomizeUsage = {
  fields: { Resources: 2, HelmCharts: 1 },
  deprecatingFields: { Bases: 1 },
  simplification: {},
  metadataTransformers: { NamePrefix: 2 },
  helmInflators: { HelmCharts: 3 },
  bases: { Local: 2, Remote: 1 },
  patches: { Patches: 4 },
  topTier: { Resources: 5, ConfigMapGenerators: 1 },
};

async function exposition(m: ReturnType<typeof createMetrics>): Promise<string> {
  return m.registry.metrics();
}

test("registers no kustomize metric until a build is recorded", async () => {
  const m = createMetrics({ processMetrics: false });
  assert.doesNotMatch(await exposition(m), /kustomize/);
});

test("records a build under Config Sync's names, labels and types, latency in milliseconds", async () => {
  const m = createMetrics({ processMetrics: false });
  m.recordKustomizeBuild({ latencyMs: 35, resourceCount: 7, usage });
  const text = await exposition(m);
  const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => [x[1], x[2]]));
  for (const name of [
    "kustomize_field_count",
    "kustomize_deprecating_field_count",
    "kustomize_builtin_transformers",
    "kustomize_helm_inflator_count",
    "kustomize_base_count",
    "kustomize_patch_count",
    "kustomize_ordered_top_tier_metrics",
    "kustomize_resource_count",
  ])
    assert.equal(types.get(`config_sync_${name}`), "gauge", name);
  assert.equal(types.get("config_sync_kustomize_build_latency"), "histogram");
  // No simplification transformer used: that gauge has no series, so it is not served at all.
  assert.equal(types.has("config_sync_kustomize_simplification_adoption_count"), false);
  for (const line of [
    'config_sync_kustomize_field_count{field_name="Resources"} 2',
    'config_sync_kustomize_deprecating_field_count{deprecating_field="Bases"} 1',
    'config_sync_kustomize_builtin_transformers{k8s_metadata_transformer="NamePrefix"} 2',
    'config_sync_kustomize_helm_inflator_count{helm_inflator="HelmCharts"} 3',
    'config_sync_kustomize_base_count{base_source="Local"} 2',
    'config_sync_kustomize_base_count{base_source="Remote"} 1',
    'config_sync_kustomize_patch_count{patch_field="Patches"} 4',
    'config_sync_kustomize_ordered_top_tier_metrics{top_tier_field="ConfigMapGenerators"} 1',
    "config_sync_kustomize_resource_count 7",
    'config_sync_kustomize_build_latency_bucket{le="20"} 0',
    'config_sync_kustomize_build_latency_bucket{le="40"} 1',
    'config_sync_kustomize_build_latency_bucket{le="10240"} 1',
    "config_sync_kustomize_build_latency_sum 35",
  ])
    assert.ok(text.split("\n").includes(line), `missing ${line}`);
});

test("each build's usage replaces the last one's; an unreadable kustomization keeps it", async () => {
  const m = createMetrics({ processMetrics: false });
  m.recordKustomizeBuild({ latencyMs: 5, resourceCount: 7, usage });
  m.recordKustomizeBuild({
    latencyMs: 50,
    resourceCount: 1,
    usage: { ...usage, fields: { Resources: 1 }, deprecatingFields: {}, simplification: { Images: 2 } },
  });
  let text = await exposition(m);
  assert.ok(text.includes('config_sync_kustomize_field_count{field_name="Resources"} 1'));
  assert.ok(!text.includes('field_name="HelmCharts"'), "a field the new build does not use is gone");
  assert.ok(!text.includes("config_sync_kustomize_deprecating_field_count"), "an emptied gauge is unregistered");
  assert.ok(text.includes('config_sync_kustomize_simplification_adoption_count{simplification_field="Images"} 2'));
  assert.ok(text.includes("config_sync_kustomize_build_latency_count 2"));
  m.recordKustomizeBuild({ latencyMs: 1, resourceCount: 0, usage: undefined });
  text = await exposition(m);
  assert.ok(text.includes("config_sync_kustomize_resource_count 0"));
  assert.ok(text.includes('config_sync_kustomize_field_count{field_name="Resources"} 1'));
});
