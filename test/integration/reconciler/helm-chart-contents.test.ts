/**
 * What a chart's `helm template --output-dir` writes, read as Config Sync's reconciler reads helm-sync's
 * folder: every .yaml/.yml/.json file below the chart's own directory, hooks and chart tests included (helm
 * template renders them; Config Sync passes neither --no-hooks nor --skip-tests), objects without a namespace
 * in `default` for a RootSync, and a template's failure a KNV2004 source error (helm-sync's error); which
 * values helm renders with, and where a release's objects go as spec.helm.namespace and deployNamespace change.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  customApi,
  ensureNamespace,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  type JsonObject,
  updateRootSyncSpec,
} from "../../support/index.ts";
import { startHelmRepo, type HelmRepo } from "../../support/helm-repo.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();

function cleanUp(t: TestContext, what: () => Promise<unknown>): void {
  t.after(() =>
    what().then(
      () => undefined,
      () => undefined,
    ),
  );
}

async function secret(t: TestContext, data: Record<string, string>): Promise<string> {
  const name = `helm-${suffix()}`;
  await coreApi().createNamespacedSecret({
    namespace: rootSyncNamespace,
    body: { metadata: { name }, stringData: data },
  });
  cleanUp(t, () => coreApi().deleteNamespacedSecret({ name, namespace: rootSyncNamespace }));
  return name;
}

/** A RootSync rendering `chart` from `repo` (token auth and its CA), with its reconciler started. */
async function helmRootSync(t: TestContext, repo: HelmRepo, helm: JsonObject): Promise<string> {
  await ensureNamespace(t, rootSyncNamespace);
  const name = `helm-chart-${suffix()}`;
  await customApi().createNamespacedCustomObject({
    ...rootSyncs,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name, namespace: rootSyncNamespace },
      spec: {
        sourceFormat: "unstructured",
        sourceType: "helm",
        helm: {
          repo: repo.url,
          auth: "token",
          secretRef: { name: await secret(t, { username: repo.username, password: repo.password }) },
          caCertSecretRef: { name: await secret(t, { cert: repo.caCert }) },
          ...helm,
        },
      },
    },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { renderToolsDir });
  return name;
}

function configMap(name: string, annotations: Record<string, string> = {}): string {
  return [
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata:",
    `  name: {{ .Release.Name }}-${name}`,
    ...(Object.keys(annotations).length === 0 ? [] : ["  annotations:"]),
    ...Object.entries(annotations).map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`),
  ].join("\n");
}

/** A chart with what real charts hold besides plain templates, at `version`. */
function richChart(
  version: string,
  options: { readonly keep: boolean },
): { name: string; version: string; files: Record<string, string> } {
  const subchart = (alias: string): string =>
    `- name: sub\n  version: 0.1.0\n  alias: ${alias}\n  condition: ${alias}.enabled\n`;
  return {
    name: "rich",
    version,
    files: {
      "Chart.yaml": `apiVersion: v2\nname: rich\nversion: ${version}\ndependencies:\n${subchart("enabled")}${subchart("disabled")}`,
      "values.yaml": "enabled:\n  enabled: true\ndisabled:\n  enabled: false\n",
      "charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
      "charts/sub/templates/cm.yaml": `${configMap("{{ .Chart.Name }}")}\ndata:\n  releaseNamespace: {{ .Release.Namespace }}\n`,
      "templates/NOTES.txt": "Installed {{ .Release.Name }}\n",
      "templates/_helpers.tpl": '{{- define "rich.name" }}rich{{ end }}\n',
      "templates/release.yaml": [
        configMap("release"),
        "  namespace: {{ .Release.Namespace }}",
        "data:",
        '  lookup: {{ lookup "v1" "Namespace" "" "default" | toJson | quote }}',
        '  monitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}',
        "  install: {{ .Release.IsInstall | quote }}",
      ].join("\n"),
      "templates/hooks.yaml": [
        configMap("pre-install", { "helm.sh/hook": "pre-install", "helm.sh/hook-delete-policy": "hook-succeeded" }),
        "---",
        configMap("post-upgrade", { "helm.sh/hook": "post-install,post-upgrade" }),
      ].join("\n"),
      "templates/tests/test-connection.yaml": configMap("test", { "helm.sh/hook": "test" }),
      "templates/list.yaml": [
        "apiVersion: v1",
        "kind: List",
        "items:",
        ...["one", "two"].flatMap((n) => [
          "- apiVersion: v1",
          "  kind: ConfigMap",
          "  metadata:",
          `    name: {{ .Release.Name }}-${n}`,
        ]),
      ].join("\n"),
      "templates/disabled.yaml": `{{- if .Values.never }}\n${configMap("never")}\n{{- end }}\n`,
      "templates/comments.yaml": "# nothing here\n---\n# nor here\n",
      // Written by helm under these names, which Config Sync's reader skips.
      "templates/object.txt": configMap("txt"),
      "templates/object.YAML": configMap("upper"),
      ...(options.keep ? { "templates/keep.yaml": configMap("keep", { "helm.sh/resource-policy": "keep" }) } : {}),
    },
  };
}

async function configMaps(namespace: string, prefix: string): Promise<Record<string, Record<string, string>>> {
  const list = await coreApi().listNamespacedConfigMap({ namespace });
  return Object.fromEntries(
    list.items.flatMap((c) => (c.metadata?.name?.startsWith(prefix) ? [[c.metadata.name, c.data ?? {}]] : [])),
  );
}

test("a chart syncs what `helm template --output-dir` writes, as Config Sync reads it: hooks and chart tests, the subchart its condition enables under its alias, a List's items; NOTES.txt, partials, empty and comment-only templates and files not named .yaml add nothing; objects without a namespace go to default; a helm.sh/resource-policy: keep object dropped from the chart is pruned", async (t) => {
  const repo = await startHelmRepo(t);
  await repo.publish(richChart("1.0.0", { keep: true }));
  await repo.publish(richChart("1.1.0", { keep: false }));
  const release = `rel${suffix()}`;
  const ns = `helm-chart-${suffix()}`;
  await ensureNamespace(t, ns);
  const name = await helmRootSync(t, repo, { chart: "rich", version: "1.0.0", releaseName: release, namespace: ns });
  await rootSynced(name, "1.0.0");

  // Config Sync's helm-sync runs helm template without cluster access: lookup finds nothing and only
  // helm's built-in API versions are known.
  assert.deepEqual(await configMaps(ns, release), {
    [`${release}-release`]: { lookup: "{}", monitoring: "false", install: "true" },
  });
  // The enabled subchart is named by its alias; the other's condition is false.
  const unnamespaced = ["enabled", "keep", "one", "post-upgrade", "pre-install", "test", "two"];
  const declared = await configMaps("default", release);
  assert.deepEqual(
    Object.keys(declared).sort(),
    unnamespaced.map((n) => `${release}-${n}`),
  );
  assert.deepEqual(declared[`${release}-enabled`], { releaseNamespace: ns });
  const hook = await coreApi().readNamespacedConfigMap({ namespace: "default", name: `${release}-pre-install` });
  assert.equal(hook.metadata?.annotations?.["helm.sh/hook"], "pre-install");
  assert.equal(hook.metadata?.annotations?.["configmanagement.gke.io/source-path"], "rich/templates/hooks.yaml");

  // Config Sync's applier knows nothing of helm's keep policy: the object goes with the chart's next version.
  await updateRootSyncSpec(name, (spec) => ({ ...spec, helm: { ...(spec["helm"] as JsonObject), version: "1.1.0" } }));
  await rootSynced(name, "1.1.0");
  assert.deepEqual(
    Object.keys(await configMaps("default", release)).sort(),
    unnamespaced.filter((n) => n !== "keep").map((n) => `${release}-${n}`),
  );
});

test("`required`, `fail`, a values.schema.json violation and a template that is no YAML are KNV2004 source errors with helm's message, as helm-sync reports them, and what was synced stays", async (t) => {
  const repo = await startHelmRepo(t);
  const ok = configMap("ok");
  const broken: Record<string, { files: Record<string, string>; message: RegExp }> = {
    "2.0.0": {
      files: {
        "templates/password.yaml": `${configMap("secret")}\ndata:\n  password: {{ required "a password is required" .Values.password }}\n`,
      },
      message:
        /^KNV2004: .*Error: execution error at \(bad\/templates\/password\.yaml:\d+:\d+\): a password is required/,
    },
    "3.0.0": {
      files: { "templates/fail.yaml": '{{ fail "this chart needs a cluster" }}\n' },
      message:
        /^KNV2004: .*Error: execution error at \(bad\/templates\/fail\.yaml:\d+:\d+\): this chart needs a cluster/,
    },
    "4.0.0": {
      files: {
        "values.yaml": "replicas: many\n",
        "values.schema.json": JSON.stringify({ type: "object", properties: { replicas: { type: "integer" } } }),
      },
      message:
        /^KNV2004: .*values don't meet the specifications of the schema\(s\) in the following chart\(s\): bad: .*\/replicas/,
    },
    "5.0.0": {
      files: { "templates/ok.yaml": `${ok}\ndata:\n  a: [\n` },
      message: /^KNV2004: .*YAML parse error on bad\/templates\/ok\.yaml/,
    },
  };
  await repo.publish({ name: "bad", version: "1.0.0", files: { "templates/ok.yaml": ok } });
  for (const [version, { files }] of Object.entries(broken))
    await repo.publish({ name: "bad", version, files: { "templates/ok.yaml": ok, ...files } });
  const release = `rel${suffix()}`;
  const name = await helmRootSync(t, repo, { chart: "bad", version: "1.0.0", releaseName: release });
  await rootSynced(name, "1.0.0");

  for (const [version, { message }] of Object.entries(broken)) {
    await updateRootSyncSpec(name, (spec) => ({ ...spec, helm: { ...(spec["helm"] as JsonObject), version } }));
    const error = await eventually(
      async () => {
        const source = (await rootSyncStatus(name))["source"] as JsonObject | undefined;
        if ((source?.["helmStatus"] as JsonObject | undefined)?.["version"] !== version) return undefined;
        return ((source?.["errors"] ?? []) as JsonObject[])[0];
      },
      { timeoutMs: 60_000, what: `chart version ${version} to be reported as a source error` },
    );
    assert.equal(error["code"], "2004", version);
    assert.match(String(error["errorMessage"]), message, version);
    assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], "1.0.0");
    assert.deepEqual(Object.keys(await configMaps("default", release)), [`${release}-ok`]);
  }
});

test("a chart without templates syncs at its version, as Config Sync's TestHelmEmptyChart", async (t) => {
  const repo = await startHelmRepo(t);
  await repo.publish({ name: "empty", version: "v1.0.0-latest", files: {} });
  const name = await helmRootSync(t, repo, { chart: "empty", version: "v1.0.0-latest" });
  const status = await rootSynced(name, "v1.0.0-latest");
  for (const phase of ["source", "rendering", "sync"])
    assert.equal((status[phase] as JsonObject)["errors"], undefined, `${phase}: ${JSON.stringify(status[phase])}`);
});

test("values files are applied in valuesFileRefs order, two keys of one ConfigMap included, and inline values over them all (Config Sync's TestHelmConfigMapOverride)", async (t) => {
  const repo = await startHelmRepo(t);
  const template = ["first", "second", "inline", "chart"].map((key) => `  ${key}: {{ .Values.${key} | quote }}`);
  await repo.publish({
    name: "layers",
    version: "1.0.0",
    files: {
      "values.yaml": "first: chart\nsecond: chart\ninline: chart\nchart: chart\n",
      "templates/cm.yaml": [configMap("layers"), "data:", ...template].join("\n"),
    },
  });
  const values = `helm-layers-${suffix()}`;
  await coreApi().createNamespacedConfigMap({
    namespace: rootSyncNamespace,
    body: {
      metadata: { name: values },
      immutable: true,
      data: {
        a: "first: a\nsecond: a\ninline: a\n",
        b: "second: b\ninline: b\n",
      },
    },
  });
  cleanUp(t, () => coreApi().deleteNamespacedConfigMap({ name: values, namespace: rootSyncNamespace }));
  const release = `rel${suffix()}`;
  const name = await helmRootSync(t, repo, {
    chart: "layers",
    version: "1.0.0",
    releaseName: release,
    values: { inline: "inline" },
    valuesFileRefs: [
      { name: values, dataKey: "a" },
      { name: values, dataKey: "b" },
    ],
  });
  await rootSynced(name, "1.0.0");
  assert.deepEqual((await configMaps("default", release))[`${release}-layers`], {
    first: "a",
    second: "b",
    inline: "inline",
    chart: "chart",
  });
});

test("a release moves as spec.helm.namespace gives way to deployNamespace and then to neither, under one chart version: each move applies the objects where they now go and prunes them where they were (Config Sync's TestPublicHelm)", async (t) => {
  const repo = await startHelmRepo(t);
  await repo.publish({
    name: "placed",
    version: "1.0.0",
    files: {
      "templates/release.yaml": `${configMap("release")}\n  namespace: {{ .Release.Namespace }}\n`,
      "templates/plain.yaml": configMap("plain"),
    },
  });
  const release = `rel${suffix()}`;
  const [releaseNs, deployNs] = [`helm-release-${suffix()}`, `helm-deploy-${suffix()}`];
  // Neither exists: a RootSync creates the namespaces its objects use (namespaceStrategy implicit).
  for (const ns of [releaseNs, deployNs]) cleanUp(t, () => coreApi().deleteNamespace({ name: ns }));
  for (const object of ["release", "plain"])
    cleanUp(t, () => coreApi().deleteNamespacedConfigMap({ name: `${release}-${object}`, namespace: "default" }));
  const name = await helmRootSync(t, repo, {
    chart: "placed",
    version: "1.0.0",
    releaseName: release,
    namespace: releaseNs,
  });
  const placement = async (): Promise<Record<string, string[]>> => {
    const where: Record<string, string[]> = {};
    for (const ns of ["default", releaseNs, deployNs]) {
      const names = Object.keys(await configMaps(ns, release).catch(() => ({})));
      if (names.length > 0) where[ns] = names.sort();
    }
    return where;
  };
  const placed = (expected: Record<string, string[]>, what: string): Promise<true> =>
    eventually(async () => JSON.stringify(await placement()) === JSON.stringify(expected) || undefined, {
      timeoutMs: 60_000,
      what: `${what}: ${JSON.stringify(expected)}`,
    });
  await rootSynced(name, "1.0.0");
  await placed({ default: [`${release}-plain`], [releaseNs]: [`${release}-release`] }, "released into namespace");

  // "" is unset, as Config Sync's Go reads it.
  const place = (namespace: string, deployNamespace: string): Promise<void> =>
    updateRootSyncSpec(name, (spec) => ({
      ...spec,
      helm: { ...(spec["helm"] as JsonObject), namespace, deployNamespace },
    }));
  await place("", deployNs);
  await placed({ [deployNs]: [`${release}-plain`, `${release}-release`] }, "moved into deployNamespace");
  await place("", "");
  await placed({ default: [`${release}-plain`, `${release}-release`] }, "released into default");
  const status = await rootSyncStatus(name);
  assert.equal(status["lastSyncedCommit"], "1.0.0");
  assert.equal((status["sync"] as JsonObject)["errors"], undefined, JSON.stringify(status["sync"]));
  // The namespaces it created were left behind, not deleted with the objects (Config Sync detaches them).
  for (const ns of [releaseNs, deployNs])
    await coreApi()
      .readNamespace({ name: ns })
      .catch((error: unknown) => assert.fail(`${ns}: ${String(statusCode(error))}`));
});
