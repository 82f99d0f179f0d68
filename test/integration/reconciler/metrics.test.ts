import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRepoSync,
  eventually,
  type JsonObject,
  repoSyncStatus,
  startReconciler,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

/** A scrape: the `# TYPE` of each metric and its sample lines. */
interface Scrape {
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly string[];
}

async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(`${url}/metrics`);
  assert.equal(response.status, 200);
  const text = await response.text();
  return {
    types: new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] ?? "", m[2] ?? ""])),
    samples: text.split("\n").filter((line) => line !== "" && !line.startsWith("#")),
  };
}

/** Samples of one metric (a histogram's through its _bucket, _sum and _count series). */
function samplesOf(s: Scrape, name: string): string[] {
  const names = s.types.get(name) === "histogram" ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
  return s.samples.filter((line) => names.some((n) => line.startsWith(`${n}{`) || line.startsWith(`${n} `)));
}

/** Registered config_sync_ metrics with no sample at all: registered, never recorded. */
function unrecorded(s: Scrape): string[] {
  return [...s.types.keys()].filter((name) => name.startsWith("config_sync_") && samplesOf(s, name).length === 0);
}

/** The value of the one sample of `name` whose labels include every `labels` pair. */
function valueOf(s: Scrape, name: string, labels: Readonly<Record<string, string>>): number | undefined {
  const line = samplesOf(s, name).find(
    (l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)),
  );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

function configMap(name: string, namespace: string, data: Record<string, string>): string {
  return JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });
}

test("every registered config_sync_ metric has a sample after a sync, a drift correction and a source error", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  await repo.write("config/b.yaml", configMap("b", namespace, { size: "1" }));
  const first = await repo.commit("two config maps");
  await createRepoSync(namespace, repo, { git: { period: "15s" } });
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" }, { metricsPort: 0 });
  const url = reconciler.metricsUrl;
  assert.ok(url !== undefined);
  await eventually(async () => (await repoSyncStatus(namespace))["lastSyncedCommit"] === first, {
    timeoutMs: 30_000,
    what: "the first commit synced",
  });

  // A drift correction, so that the remediator's metrics have something to say too.
  const live = (await coreApi().readNamespacedConfigMap({ namespace, name: "a" })) as unknown as JsonObject;
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "a",
    body: { ...live, data: { color: "red" } } as never,
  });
  const synced = await eventually(
    async () => {
      const s = await scrape(url);
      const cm = await coreApi().readNamespacedConfigMap({ namespace, name: "a" });
      return cm.data?.["color"] === "blue" && samplesOf(s, "config_sync_remediate_duration_seconds").length > 0
        ? s
        : undefined;
    },
    { timeoutMs: 15_000, what: "the drifted config map corrected" },
  );
  assert.deepEqual(unrecorded(synced), [], "registered but without a sample after a sync");
  assert.ok(synced.types.size > 0);
  assert.equal(valueOf(synced, "config_sync_ready_resource_count", { resourcegroup: `${namespace}/repo-sync` }), 2);
  assert.equal(valueOf(synced, "config_sync_pipeline_error_observed", { component: "source" }), 0);
  assert.equal(valueOf(synced, "config_sync_pipeline_error_observed", { component: "sync" }), 0);
  assert.ok((valueOf(synced, "config_sync_api_duration_seconds_count", { operation: "get" }) ?? 0) > 0);
  assert.ok(
    (valueOf(synced, "config_sync_parser_duration_seconds_count", { source: "parse", status: "success" }) ?? 0) > 0,
  );

  // A commit that does not parse: the source stage fails.
  await repo.write("config/bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n");
  const broken = await repo.commit("a file that does not parse");
  const failed = await eventually(
    async () => {
      const s = await scrape(url);
      return valueOf(s, "config_sync_pipeline_error_observed", { component: "source" }) === 1 ? s : undefined;
    },
    { timeoutMs: 30_000, what: `the source error of ${broken.slice(0, 7)} observed` },
  );
  assert.deepEqual(unrecorded(failed), [], "registered but without a sample after an error");
  assert.ok(
    (valueOf(failed, "config_sync_parser_duration_seconds_count", { source: "parse", status: "error" }) ?? 0) > 0,
  );
  assert.equal(valueOf(failed, "config_sync_internal_errors_total", { source: "parser" }), 0);
});
