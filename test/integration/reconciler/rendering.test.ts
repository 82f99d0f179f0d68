import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderThroughServer } from "@driftless/sync/render";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  type JsonObject,
  repoSyncStatus,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  updateRootSyncSpec,
  removeAfter,
} from "../../support/index.ts";
import { startRenderServer } from "../../support/render-server.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();

const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);

async function sync(t: TestContext, name: string, repo: TestRepo, spec: JsonObject = {}): Promise<void> {
  await createRootSync(name, repo, { spec });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { renderToolsDir });
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

async function configMaps(namespace: string): Promise<Map<string, JsonObject>> {
  const list = await coreApi().listNamespacedConfigMap({ namespace });
  const byName = new Map<string, JsonObject>();
  for (const cm of list.items)
    if (cm.metadata?.name !== "kube-root-ca.crt") byName.set(cm.metadata!.name!, cm as JsonObject);
  return byName;
}

async function renderingAt(name: string, commit: string): Promise<JsonObject> {
  return eventually(
    async () => {
      const rendering = (await rootSyncStatus(name))["rendering"] as JsonObject | undefined;
      return rendering?.["commit"] === commit ? rendering : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report rendering of ${commit.slice(0, 7)}` },
  );
}

test("renders a kustomize overlay (configMapGenerator, namePrefix, commonLabels) and syncs exactly its objects", async (t) => {
  const name = `render-overlay-${suffix()}`;
  const ns = `rk-${suffix()}`;
  cleanUpNamespace(t, ns);
  const repo = await TestRepo.create(t);
  await repo.write("base/kustomization.yaml", yaml({ resources: ["settings.yaml"] }));
  await repo.write(
    "base/settings.yaml",
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings" }, data: { mode: "base" } }),
  );
  await repo.write(
    "config/kustomization.yaml",
    yaml({
      namespace: ns,
      namePrefix: "p-",
      commonLabels: { team: "blue" },
      resources: ["../base"],
      configMapGenerator: [{ name: "generated", literals: ["color=green"] }],
    }),
  );
  const commit = await repo.commit("overlay");
  await sync(t, name, repo);
  await rootSynced(name, commit);

  const cms = await configMaps(ns);
  const names = [...cms.keys()].sort();
  assert.equal(names.length, 2, `exactly two ConfigMaps, got ${names.join(", ")}`);
  assert.equal(names[1], "p-settings");
  assert.match(names[0]!, /^p-generated-[a-z0-9]{10}$/, "the generator's hash-suffixed name");
  for (const cm of cms.values())
    assert.equal((cm["metadata"] as JsonObject & { labels: Record<string, string> }).labels["team"], "blue");
  assert.deepEqual(cms.get(names[0]!)!["data"], { color: "green" });

  const rendering = await renderingAt(name, commit);
  assert.equal(rendering["message"], "Rendering succeeded");
  assert.deepEqual(rendering["errorSummary"], {});
  assert.deepEqual((rendering["gitStatus"] as JsonObject)["dir"], "config");
  assert.equal(typeof rendering["lastUpdate"], "string");

  // As Config Sync's reconciler, it says on its sync whether the source needs rendering, each commit anew.
  const requiresRendering = async (): Promise<string | undefined> =>
    (
      (await customApi().getNamespacedCustomObject({
        group: "configsync.gke.io",
        version: "v1beta1",
        namespace: rootSyncNamespace,
        plural: "rootsyncs",
        name,
      })) as { metadata: { annotations?: Record<string, string> } }
    ).metadata.annotations?.["configsync.gke.io/requires-rendering"];
  assert.equal(await requiresRendering(), "true");
  await repo.remove("config/kustomization.yaml");
  await repo.write(
    "config/plain.yaml",
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "plain", namespace: ns } }),
  );
  const plain = await repo.commit("no kustomization");
  await rootSynced(name, plain);
  assert.equal(await requiresRendering(), "false");
});

test("rendered objects carry kustomize's origin annotation, as Config Sync asks for it before every build", async (t) => {
  const name = `render-origin-${suffix()}`;
  const ns = `ro-${suffix()}`;
  cleanUpNamespace(t, ns);
  const repo = await TestRepo.create(t);
  await repo.write("base/kustomization.yaml", yaml({ resources: ["settings.yaml"] }));
  await repo.write("base/settings.yaml", yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings" } }));
  await repo.write(
    "config/kustomization.yaml",
    yaml({
      namespace: ns,
      resources: ["../base"],
      configMapGenerator: [{ name: "generated", literals: ["color=green"] }],
      // Kept as written: Config Sync adds originAnnotations beside the options already there.
      buildMetadata: ["managedByLabel"],
    }),
  );
  const commit = await repo.commit("overlay with buildMetadata");
  await sync(t, name, repo);
  await rootSynced(name, commit);

  const cms = await configMaps(ns);
  const annotations = (cm: JsonObject | undefined): Record<string, string> =>
    ((cm?.["metadata"] as JsonObject | undefined)?.["annotations"] ?? {}) as Record<string, string>;
  // Paths relative to the sync directory's kustomization, as kustomize writes them when it is the root.
  assert.equal(annotations(cms.get("settings"))["config.kubernetes.io/origin"], "path: ../base/settings.yaml\n");
  const generated = [...cms.values()].find((cm) =>
    String((cm["metadata"] as JsonObject)["name"]).startsWith("generated-"),
  );
  assert.equal(
    annotations(generated)["config.kubernetes.io/origin"],
    "configuredIn: kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n",
  );
});

test("inflates a local Helm chart through helmCharts with inline values", async (t) => {
  const name = `render-helm-${suffix()}`;
  const ns = `rh-${suffix()}`;
  cleanUpNamespace(t, ns);
  const repo = await TestRepo.create(t);
  await repo.write("config/charts/tiny/Chart.yaml", "apiVersion: v2\nname: tiny\nversion: 0.1.0\n");
  await repo.write("config/charts/tiny/values.yaml", "greeting: default\nextra: false\n");
  await repo.write(
    "config/charts/tiny/templates/configmap.yaml",
    [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: {{ .Release.Name }}-tiny",
      "  namespace: {{ .Release.Namespace }}",
      "data:",
      "  greeting: {{ .Values.greeting | quote }}",
      "{{- if .Values.extra }}",
      "---",
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: {{ .Release.Name }}-extra",
      "  namespace: {{ .Release.Namespace }}",
      "{{- end }}",
      "",
    ].join("\n"),
  );
  await repo.write(
    "config/kustomization.yaml",
    // A repo-less entry: kustomize reads the chart from chartHome (default `charts/`), no network.
    yaml({
      helmCharts: [
        { name: "tiny", releaseName: "rel", namespace: ns, valuesInline: { greeting: "hello", extra: true } },
      ],
    }),
  );
  const commit = await repo.commit("chart");
  await sync(t, name, repo);
  await rootSynced(name, commit);

  const cms = await configMaps(ns);
  assert.deepEqual([...cms.keys()].sort(), ["rel-extra", "rel-tiny"]);
  assert.deepEqual(cms.get("rel-tiny")!["data"], { greeting: "hello" });
  assert.equal((await renderingAt(name, commit))["message"], "Rendering succeeded");
});

test("a broken kustomization is reported in status.rendering with KNV1068 and nothing is pruned", async (t) => {
  const name = `render-broken-${suffix()}`;
  const ns = `rb-${suffix()}`;
  cleanUpNamespace(t, ns);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/keep.yaml",
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keep", namespace: ns }, data: { a: "1" } }),
  );
  await repo.write("config/kustomization.yaml", yaml({ resources: ["keep.yaml"] }));
  const good = await repo.commit("good");
  await sync(t, name, repo);
  await rootSynced(name, good);
  assert.ok((await configMaps(ns)).has("keep"));

  // keep.yaml leaves the kustomization for a file that does not exist.
  await repo.write("config/kustomization.yaml", yaml({ resources: ["missing.yaml"] }));
  const broken = await repo.commit("broken");
  const rendering = await renderingAt(name, broken);
  assert.equal(rendering["message"], "Rendering failed");
  const errors = rendering["errors"] as JsonObject[];
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!["code"], "1068");
  assert.match(String(errors[0]!["errorMessage"]), /KNV1068/);
  assert.match(String(errors[0]!["errorMessage"]), /missing\.yaml/, "the tool's output");
  assert.deepEqual(rendering["errorSummary"], { totalCount: 1, errorCountAfterTruncation: 1 });

  // Each retry of the commit marks it Syncing again before rendering fails again: wait for the failure.
  const syncing = await eventually(
    async () => {
      const conditions = ((await rootSyncStatus(name))["conditions"] ?? []) as JsonObject[];
      const condition = conditions.find((c) => c["type"] === "Syncing");
      return condition?.["reason"] === "Rendering" ? condition : undefined;
    },
    { timeoutMs: 30_000, what: "the Syncing condition to say Rendering" },
  );
  assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], good);
  assert.equal(syncing["message"], "Rendering failed");
  assert.deepEqual(syncing["errorSourceRefs"], ["status.rendering.errors"]);
  // Nothing pruned: the ConfigMap the last good render declared is still there.
  assert.ok((await configMaps(ns)).has("keep"));
});

test("a sync directory without a kustomization but with kustomizations below it is a rendering error (KNV1068), not manifests, as in Config Sync", async (t) => {
  const name = `render-missing-${suffix()}`;
  const ns = `rm-${suffix()}`;
  cleanUpNamespace(t, ns);
  const repo = await TestRepo.create(t);
  await repo.write("config/base/kustomization.yaml", yaml({ resources: ["cm.yaml"] }));
  await repo.write("config/base/cm.yaml", yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keep" } }));
  await repo.write("config/kustomization.yaml", yaml({ namespace: ns, resources: ["base"] }));
  const good = await repo.commit("kustomization at the top");
  await sync(t, name, repo);
  await rootSynced(name, good);
  assert.ok((await configMaps(ns)).has("keep"));

  await repo.remove("config/kustomization.yaml");
  const missing = await repo.commit("no kustomization at the top");
  const rendering = await renderingAt(name, missing);
  assert.equal(rendering["message"], "Rendering failed");
  const errors = rendering["errors"] as JsonObject[];
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!["code"], "1068");
  assert.match(
    String(errors[0]!["errorMessage"]),
    /Kustomization config file is missing from the sync directory [\s\S]*base\/kustomization\.yaml/,
  );
  const status = await rootSyncStatus(name);
  assert.deepEqual(
    (status["source"] as JsonObject)["errors"] ?? [],
    [],
    "the kustomization was not read as a manifest",
  );
  assert.equal(status["lastSyncedCommit"], good);
  assert.ok((await configMaps(ns)).has("keep"), "nothing pruned");

  await repo.write("config/kustomization.yaml", yaml({ namespace: ns, resources: ["base"] }));
  const back = await repo.commit("kustomization back");
  await rootSynced(name, back);
  assert.equal((await renderingAt(name, back))["message"], "Rendering succeeded");
});

test("a source error about a rendered object names, in errorResources, the file kustomize build --output writes it to, as the annotations of a synced one do (Config Sync's e2e TestHydrateHelmOverlay: a rendered deprecated Group and Kind is KNV1050 after Rendering succeeded)", async (t) => {
  const name = `render-knv1050-${suffix()}`;
  const [a, b] = [`rk-a-${suffix()}`, `rk-b-${suffix()}`];
  const repo = await TestRepo.create(t);
  // Two namespaces: kustomize then prefixes each file with its namespace.
  await repo.write(
    "config/objects.yaml",
    [
      { apiVersion: "extensions/v1beta1", kind: "Deployment", metadata: { name: "old", namespace: a }, spec: {} },
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: b }, data: { k: "v" } },
    ]
      .map((object) => yaml(object))
      .join("\n---\n"),
  );
  await repo.write("config/kustomization.yaml", yaml({ resources: ["objects.yaml"] }));
  const commit = await repo.commit("a deprecated Group and Kind among rendered objects");
  await sync(t, name, repo);

  const status = await eventually(
    async () => {
      const current = await rootSyncStatus(name);
      const source = current["source"] as JsonObject | undefined;
      return source?.["commit"] === commit && ((source["errors"] ?? []) as JsonObject[]).length > 0
        ? current
        : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report the source error of ${commit.slice(0, 7)}` },
  );
  assert.equal((status["rendering"] as JsonObject)["message"], "Rendering succeeded");
  const errors = (status["source"] as JsonObject)["errors"] as JsonObject[];
  assert.deepEqual(
    errors.map((e) => e["code"]),
    ["1050"],
  );
  // The oracle: the real kustomize writing one file per object, the folder Config Sync's reconciler reads.
  const out = await mkdtemp(join(tmpdir(), "driftless-kustomize-out-"));
  removeAfter(t, out);
  execFileSync(join(renderToolsDir, "kustomize"), ["build", join(repo.work, "config"), "--output", out]);
  const written = (await readdir(out)).filter((file) => file.includes("deployment"));
  assert.equal(written.length, 1, written.join(", "));
  const resources = errors[0]!["errorResources"] as JsonObject[];
  assert.deepEqual(
    resources.map((r) => r["sourcePath"]),
    [`config/${written[0]}`],
  );
});

test("a remote base renders only with override.enableShellInRendering, as in Config Sync", async (t) => {
  const name = `render-remote-${suffix()}`;
  const ns = `rr-${suffix()}`;
  cleanUpNamespace(t, ns);
  const remote = await TestRepo.create(t);
  await remote.write("base/kustomization.yaml", yaml({ resources: ["cm.yaml"] }));
  await remote.write(
    "base/cm.yaml",
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "from-remote", namespace: ns } }),
  );
  await remote.commit("base");
  const repo = await TestRepo.create(t);
  // kustomize clones a remote base with the git CLI, which a render without shell access does not have.
  await repo.write("config/kustomization.yaml", yaml({ resources: [`${remote.url}//base?ref=main`] }));
  const commit = await repo.commit("remote base");
  await sync(t, name, repo);
  const refused = await renderingAt(name, commit);
  assert.equal(refused["message"], "Rendering failed");
  assert.match(String((refused["errors"] as JsonObject[])[0]!["errorMessage"]), /KNV1068[\s\S]*git/);
  assert.equal((await configMaps(ns).catch(() => new Map())).size, 0);

  await updateRootSyncSpec(name, (spec) => ({ ...spec, override: { enableShellInRendering: true } }));
  await rootSynced(name, commit);
  assert.ok((await configMaps(ns)).has("from-remote"));
  assert.equal((await renderingAt(name, commit))["message"], "Rendering succeeded");
});

test("a RepoSync's reconciler refuses override.enableShellInRendering unless the manager allowed it, and runs none of the repository's code", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/kustomization.yaml", yaml({ generators: ["gen.yaml"] }));
  await repo.write(
    "config/gen.yaml",
    yaml({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "gen", annotations: { "config.kubernetes.io/function": "exec:\n  path: ./gen.sh\n" } },
    }),
  );
  // The exec function leaves a mark where the test can see it, had it run.
  const mark = join(repo.work, "..", "exec-ran");
  await repo.write(
    "config/gen.sh",
    `#!/bin/sh\ntouch ${mark}\nprintf 'apiVersion: config.kubernetes.io/v1\\nkind: ResourceList\\nitems: []\\n'\n`,
  );
  await chmod(join(repo.work, "config", "gen.sh"), 0o755);
  const commit = await repo.commit("exec function");
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none" },
        override: { enableShellInRendering: true },
      },
    },
  });
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" }, { renderToolsDir });
  const rendering = await eventually(
    async () => {
      const r = (await repoSyncStatus(namespace))["rendering"] as JsonObject | undefined;
      return r?.["commit"] === commit ? r : undefined;
    },
    { timeoutMs: 60_000, what: `RepoSync rendering of ${commit.slice(0, 7)}` },
  );
  assert.equal(rendering["message"], "Rendering failed");
  assert.match(
    String((rendering["errors"] as JsonObject[])[0]!["errorMessage"]),
    /KNV1061[\s\S]*enableShellInRendering[\s\S]*--allow-reposync-shell-in-rendering/,
  );
  assert.equal(existsSync(mark), false, "the repository's exec function ran");
});

test("a reconciler renders through a render-server process of its own (the pod's hydration-controller) and syncs its output", async (t) => {
  const name = `render-server-${suffix()}`;
  const ns = `rs-${suffix()}`;
  cleanUpNamespace(t, ns);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/kustomization.yaml",
    yaml({ namespace: ns, configMapGenerator: [{ name: "generated", literals: ["color=green"] }] }),
  );
  const commit = await repo.commit("generated");
  // The render server reads the reconciler's checkouts (read-only in a pod) and nothing else.
  const server = await startRenderServer(t, renderToolsDir);

  await createRootSync(name, repo);
  // No kustomize where the reconciler looks: everything it renders comes from the server.
  await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    {
      renderToolsDir: server.noToolsDir,
      cacheDir: server.cacheDir,
      renderer: renderThroughServer(server.socket),
    },
  );
  await rootSynced(name, commit);
  assert.equal((await renderingAt(name, commit))["message"], "Rendering succeeded");
  const names = [...(await configMaps(ns)).keys()];
  assert.equal(names.length, 1);
  assert.match(names[0] ?? "", /^generated-/);
});
