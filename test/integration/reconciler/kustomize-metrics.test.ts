/**
 * Config Sync's kustomize_* metrics on a reconciler's /metrics after it renders a kustomization
 * with the real kustomize and helm: in process mode, and through a render-server process (the
 * pod's hydration-controller), where the reconciler still records them.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { renderThroughServer } from "@driftless/sync/render";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  TestRepo,
} from "../../support/index.ts";
import { startRenderServer } from "../../support/render-server.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();

const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);
const configMap = (name: string): string => yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } });

/** Every sample line of /metrics whose name starts with `config_sync_kustomize_`, as name{labels} → value. */
async function kustomizeSamples(metricsUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith("config_sync_kustomize_")) continue;
    const cut = line.lastIndexOf(" ");
    // The sync's own labels are on every series; keep the metric's own label.
    const key = line
      .slice(0, cut)
      .replace(/,?configsync_sync_\w+="[^"]*"/g, "")
      .replace("{,", "{")
      .replace("{}", "");
    samples.set(key, Number(line.slice(cut + 1)));
  }
  return samples;
}

function cleanUpNamespace(t: TestContext, name: string): void {
  t.after(() =>
    coreApi()
      .deleteNamespace({ name })
      .then(
        () => undefined,
        () => undefined,
      ),
  );
}

test("a RootSync that renders a kustomization serves Config Sync's kustomize_* metrics, replaced by each commit's build", async (t) => {
  const name = `kmetrics-${suffix()}`;
  const ns = `km-${suffix()}`;
  cleanUpNamespace(t, ns);
  const remote = await TestRepo.create(t);
  await remote.write("remote-base/kustomization.yaml", yaml({ resources: ["cm.yaml"] }));
  await remote.write("remote-base/cm.yaml", configMap("from-remote"));
  await remote.commit("remote base");
  const repo = await TestRepo.create(t);
  await repo.write("base/kustomization.yaml", yaml({ resources: ["settings.yaml"], commonLabels: { team: "blue" } }));
  await repo.write("base/settings.yaml", configMap("settings"));
  await repo.write(
    "component/kustomization.yaml",
    yaml({ apiVersion: "kustomize.config.k8s.io/v1alpha1", kind: "Component", resources: ["extra.yaml"] }),
  );
  await repo.write("component/extra.yaml", configMap("extra"));
  await repo.write("config/charts/tiny/Chart.yaml", "apiVersion: v2\nname: tiny\nversion: 0.1.0\n");
  await repo.write("config/charts/tiny/values.yaml", "{}\n");
  await repo.write(
    "config/charts/tiny/templates/configmap.yaml",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-tiny\n",
  );
  await repo.write("config/local.yaml", configMap("local"));
  await repo.write(
    "config/patch.yaml",
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings" }, data: { patched: "yes" } }),
  );
  const kustomization = {
    namespace: ns,
    namePrefix: "p-",
    resources: ["../base", "local.yaml", `${remote.url}//remote-base?ref=${remote.branch}`],
    components: ["../component"],
    configMapGenerator: [{ name: "generated", literals: ["color=green"] }],
    patches: [{ path: "patch.yaml" }],
    helmCharts: [{ name: "tiny", releaseName: "rel" }],
  };
  await repo.write("config/kustomization.yaml", yaml(kustomization));
  const first = await repo.commit("a kustomization with a base, a remote base, a component, a patch and a chart");
  // A remote base needs shell access, as in Config Sync.
  await createRootSync(name, repo, { spec: { override: { enableShellInRendering: true } } });
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { renderToolsDir, metricsPort: 0 },
  );
  assert.ok(reconciler.metricsUrl !== undefined);
  await rootSynced(name, first);

  const samples = await kustomizeSamples(reconciler.metricsUrl);
  const expected = new Map<string, number>([
    // The root (kind and buildMetadata as kustomize's edit writes them), base, component.
    ['config_sync_kustomize_field_count{field_name="TypeMeta"}', 2],
    ['config_sync_kustomize_field_count{field_name="BuildMetadata"}', 1],
    ['config_sync_kustomize_field_count{field_name="Namespace"}', 1],
    ['config_sync_kustomize_field_count{field_name="NamePrefix"}', 1],
    ['config_sync_kustomize_field_count{field_name="Resources"}', 3],
    ['config_sync_kustomize_field_count{field_name="Components"}', 1],
    ['config_sync_kustomize_field_count{field_name="ConfigMapGenerator"}', 1],
    ['config_sync_kustomize_field_count{field_name="Patches"}', 1],
    ['config_sync_kustomize_field_count{field_name="HelmCharts"}', 1],
    ['config_sync_kustomize_field_count{field_name="CommonLabels"}', 1],
    ['config_sync_kustomize_ordered_top_tier_metrics{top_tier_field="Resources"}', 5],
    ['config_sync_kustomize_ordered_top_tier_metrics{top_tier_field="ConfigMapGenerators"}', 1],
    ['config_sync_kustomize_patch_count{patch_field="Patches"}', 1],
    ['config_sync_kustomize_base_count{base_source="Local"}', 1],
    ['config_sync_kustomize_base_count{base_source="Remote"}', 1],
    ['config_sync_kustomize_helm_inflator_count{helm_inflator="HelmCharts"}', 1],
    ['config_sync_kustomize_builtin_transformers{k8s_metadata_transformer="Namespace"}', 1],
    ['config_sync_kustomize_builtin_transformers{k8s_metadata_transformer="NamePrefix"}', 1],
    ['config_sync_kustomize_builtin_transformers{k8s_metadata_transformer="CommonLabels"}', 1],
    // settings, local, from-remote, extra, generated, rel-tiny.
    ["config_sync_kustomize_resource_count", 6],
    ["config_sync_kustomize_build_latency_count", 1],
  ]);
  const wanted = (s: Map<string, number>): Map<string, number> =>
    new Map([...s].filter(([key]) => !/_latency_(bucket|sum)/.test(key)));
  assert.deepEqual(wanted(samples), expected);
  assert.ok((samples.get("config_sync_kustomize_build_latency_sum") ?? 0) > 0, "the build took some milliseconds");
  assert.equal(samples.get('config_sync_kustomize_build_latency_bucket{le="+Inf"}'), 1);
  const text = await (await fetch(`${reconciler.metricsUrl}/metrics`)).text();
  assert.match(text, /config_sync_kustomize_resource_count\{configsync_sync_kind="RootSync",configsync_sync_name="/);

  // A new commit without the patch and the component: its build's series replace the first's.
  await repo.write("config/kustomization.yaml", yaml({ ...kustomization, patches: undefined, components: undefined }));
  const second = await repo.commit("no patch, no component");
  await rootSynced(name, second);
  const after = await eventually(
    async () => {
      const s = await kustomizeSamples(reconciler.metricsUrl!);
      return s.get("config_sync_kustomize_build_latency_count") === 2 ? s : undefined;
    },
    { timeoutMs: 30_000, what: "the second commit's build recorded" },
  );
  assert.equal(after.get("config_sync_kustomize_resource_count"), 5);
  assert.equal(after.get('config_sync_kustomize_field_count{field_name="TypeMeta"}'), 1);
  assert.equal(after.has('config_sync_kustomize_field_count{field_name="Components"}'), false);
  assert.equal(after.has('config_sync_kustomize_patch_count{patch_field="Patches"}'), false);
  assert.equal(after.get('config_sync_kustomize_ordered_top_tier_metrics{top_tier_field="Resources"}'), 4);
});

test("in a pod's layout the reconciler records the kustomize_* metrics of a build its render server ran", async (t) => {
  const name = `kmetrics-pod-${suffix()}`;
  const ns = `kmp-${suffix()}`;
  cleanUpNamespace(t, ns);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/kustomization.yaml",
    yaml({
      namespace: ns,
      configMapGenerator: [{ name: "generated", literals: ["color=green"] }],
      images: [{ name: "nginx", newTag: "1.27" }],
    }),
  );
  const commit = await repo.commit("generated");
  // The render server reads the reconciler's checkouts (read-only in a pod) and nothing else.
  const server = await startRenderServer(t, renderToolsDir);

  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    {
      renderToolsDir: server.noToolsDir,
      cacheDir: server.cacheDir,
      renderer: renderThroughServer(server.socket),
      metricsPort: 0,
    },
  );
  assert.ok(reconciler.metricsUrl !== undefined);
  await rootSynced(name, commit);
  const samples = await kustomizeSamples(reconciler.metricsUrl);
  assert.equal(samples.get("config_sync_kustomize_resource_count"), 1);
  assert.equal(samples.get("config_sync_kustomize_build_latency_count"), 1);
  assert.equal(samples.get('config_sync_kustomize_simplification_adoption_count{simplification_field="Images"}'), 1);
  assert.equal(samples.get('config_sync_kustomize_field_count{field_name="BuildMetadata"}'), 1);
  assert.equal(samples.get('config_sync_kustomize_ordered_top_tier_metrics{top_tier_field="ConfigMapGenerators"}'), 1);
});
