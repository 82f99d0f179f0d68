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
  testEnv,
  type JsonObject,
  updateRootSyncSpec,
} from "../../support/index.ts";
import { configMapMapping, Informer, KubeClient, type KubeObject } from "@driftless/kube";
import type { Reconciler } from "@driftless/sync";
import { pushChart, startHelmRepo, type ChartFiles } from "../../support/helm-repo.ts";
import { call, startRegistry, type Registry } from "../../support/registry.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();

/** A chart rendering one ConfigMap from its values, named after the release, in the release namespace. */
function webChart(version: string, extra: Record<string, string> = {}): ChartFiles {
  return {
    name: "web",
    version,
    files: {
      "values.yaml": "greeting: chart-default\ncolor: chart-default\n",
      "templates/configmap.yaml": [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: {{ .Release.Name }}-web",
        "  namespace: {{ .Release.Namespace }}",
        "data:",
        "  greeting: {{ .Values.greeting | quote }}",
        "  color: {{ .Values.color | quote }}",
        `  version: ${JSON.stringify(version)}`,
      ].join("\n"),
      ...extra,
    },
  };
}

const crd = (group: string): string =>
  JSON.stringify({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  });

function cleanUp(t: TestContext, what: () => Promise<unknown>): void {
  t.after(() =>
    what().then(
      () => undefined,
      () => undefined,
    ),
  );
}

async function secret(t: TestContext, data: Record<string, string>, namespace = rootSyncNamespace): Promise<string> {
  const name = `helm-${suffix()}`;
  await ensureNamespace(t, namespace);
  await coreApi().createNamespacedSecret({ namespace, body: { metadata: { name }, stringData: data } });
  cleanUp(t, () => coreApi().deleteNamespacedSecret({ name, namespace }));
  return name;
}

/** spec.helm's token auth for `server` (a chart repository or registry): Secrets holding its user and its CA. */
async function tokenAuth(
  t: TestContext,
  server: { readonly username: string; readonly password: string; readonly caCert: string },
  namespace = rootSyncNamespace,
): Promise<JsonObject> {
  return {
    auth: "token",
    secretRef: { name: await secret(t, { username: server.username, password: server.password }, namespace) },
    caCertSecretRef: { name: await secret(t, { cert: server.caCert }, namespace) },
  };
}

async function createHelmRootSync(
  t: TestContext,
  name: string,
  helm: JsonObject,
  spec: JsonObject = { sourceFormat: "unstructured" },
): Promise<Reconciler> {
  await ensureNamespace(t, rootSyncNamespace);
  await customApi().createNamespacedCustomObject({
    ...rootSyncs,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name, namespace: rootSyncNamespace },
      spec: { ...spec, sourceType: "helm", helm },
    },
  });
  return startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { renderToolsDir });
}

async function updateHelm(name: string, change: JsonObject): Promise<void> {
  await updateRootSyncSpec(name, (spec) => ({ ...spec, helm: { ...(spec["helm"] as JsonObject), ...change } }));
}

async function configMapData(namespace: string, name: string): Promise<Record<string, string> | undefined> {
  try {
    return (await coreApi().readNamespacedConfigMap({ namespace, name })).data;
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

function sourceErrorMatching(name: string, pattern: RegExp): Promise<JsonObject> {
  return eventually(
    async () => {
      const source = (await rootSyncStatus(name))["source"] as JsonObject | undefined;
      const errors = (source?.["errors"] ?? []) as JsonObject[];
      return errors.find((e) => pattern.test(String(e["errorMessage"])));
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report a source error matching ${pattern}` },
  );
}

test("renders a chart from an HTTPS repository with basic auth: a version range resolved to the chart version as the commit, values files and inline values, CRDs, helmStatus; a new matching version is synced", async (t) => {
  const repo = await startHelmRepo(t);
  const group = `h${suffix()}.example.com`;
  await repo.publish(webChart("1.0.0"));
  await repo.publish(webChart("1.1.0", { "crds/widgets.yaml": crd(group) }));
  await repo.publish(webChart("2.0.0"));
  const name = `helm-${suffix()}`;
  const ns = `helm-${suffix()}`;
  await ensureNamespace(t, ns);
  cleanUp(t, () =>
    customApi().deleteClusterCustomObject({
      group: "apiextensions.k8s.io",
      version: "v1",
      plural: "customresourcedefinitions",
      name: `widgets.${group}`,
    }),
  );
  const values = `helm-values-${suffix()}`;
  await ensureNamespace(t, rootSyncNamespace);
  await coreApi().createNamespacedConfigMap({
    namespace: rootSyncNamespace,
    body: {
      metadata: { name: values },
      immutable: true,
      data: { "values.yaml": "greeting: from-file\ncolor: from-file\n" },
    },
  });
  cleanUp(t, () => coreApi().deleteNamespacedConfigMap({ name: values, namespace: rootSyncNamespace }));

  await createHelmRootSync(t, name, {
    repo: repo.url,
    chart: "web",
    version: "^1.0.0",
    releaseName: "shop",
    namespace: ns,
    values: { color: "inline" },
    valuesFileRefs: [{ name: values }],
    includeCRDs: true,
    ...(await tokenAuth(t, repo)),
  });
  const status = await rootSynced(name, "1.1.0");
  assert.deepEqual(await configMapData(ns, "shop-web"), { greeting: "from-file", color: "inline", version: "1.1.0" });
  const crds = await customApi().getClusterCustomObject({
    group: "apiextensions.k8s.io",
    version: "v1",
    plural: "customresourcedefinitions",
    name: `widgets.${group}`,
  });
  assert.ok(crds, "includeCRDs applied the chart's CRD");
  // As Config Sync writes them: helmStatus.version is the spec's range, the commit the version rendered;
  // nomos status shows the Syncing condition's commit.
  for (const phase of ["source", "rendering", "sync"]) {
    const block = status[phase] as JsonObject;
    assert.deepEqual(block["helmStatus"], { repo: repo.url, chart: "web", version: "^1.0.0" }, phase);
    assert.equal(block["commit"], "1.1.0", phase);
  }
  const syncing = (status["conditions"] as JsonObject[]).find((c) => c["type"] === "Syncing");
  assert.deepEqual([syncing?.["status"], syncing?.["commit"]], ["False", "1.1.0"]);

  await repo.publish(webChart("1.2.0"));
  await rootSynced(name, "1.2.0");
  assert.equal((await configMapData(ns, "shop-web"))?.["version"], "1.2.0");
});

test("renders a chart pushed to an OCI registry with helm push, deploying its objects into deployNamespace", async (t) => {
  const registry = await startRegistry(t);
  await pushChart(t, registry, "charts", webChart("0.3.0"));
  const name = `helm-oci-${suffix()}`;
  const ns = `helm-oci-${suffix()}`;
  await ensureNamespace(t, ns);
  await createHelmRootSync(t, name, {
    repo: `oci://${registry.host}/charts`,
    chart: "web",
    version: "0.3.0",
    deployNamespace: ns,
    ...(await tokenAuth(t, registry)),
  });
  await rootSynced(name, "0.3.0");
  // Released into "default" (no spec.helm.namespace), deployed into deployNamespace.
  assert.deepEqual(await configMapData(ns, "release-name-web"), {
    greeting: "chart-default",
    color: "chart-default",
    version: "0.3.0",
  });
});

test("a chart pushed as v1.1.0 to an OCI registry syncs with spec.helm.version v1.1.0, the commit being v1.1.0 (Config Sync's e2e TestHelmNamespaceRepo)", async (t) => {
  const registry = await startRegistry(t);
  await pushChart(t, registry, "charts", webChart("v1.1.0"));
  const name = `helm-v-${suffix()}`;
  const ns = `helm-v-${suffix()}`;
  await ensureNamespace(t, ns);
  // Config Sync reads `v1.1.0` as a constraint and renders the version `helm show chart` names.
  await createHelmRootSync(t, name, {
    repo: `oci://${registry.host}/charts`,
    chart: "web",
    version: "v1.1.0",
    namespace: ns,
    ...(await tokenAuth(t, registry)),
  });
  const status = await rootSynced(name, "v1.1.0");
  assert.equal((status["source"] as JsonObject)["commit"], "v1.1.0");
  assert.equal((await configMapData(ns, "release-name-web"))?.["version"], "v1.1.0");
});

/** Copies `from:tag` into repository `to` under the tag `as` only (blobs mounted, manifest put), as `crane copy` would. */
async function copyChart(registry: Registry, from: string, tag: string, to: string, as: string): Promise<void> {
  const oci = "application/vnd.oci.image.manifest.v1+json";
  const got = await call(registry, "GET", `/v2/${from}/manifests/${tag}`, undefined, { accept: oci });
  const manifest = JSON.parse(got.body.toString()) as { config: { digest: string }; layers: { digest: string }[] };
  for (const digest of [manifest.config.digest, ...manifest.layers.map((layer) => layer.digest)]) {
    const mounted = await call(registry, "POST", `/v2/${to}/blobs/uploads/?mount=${digest}&from=${from}`);
    assert.equal(mounted.status, 201, `mounting ${digest} into ${to}`);
  }
  const put = await call(registry, "PUT", `/v2/${to}/manifests/${as}`, got.body, { "content-type": oci });
  assert.equal(put.status, 201, `tagging ${to}:${as}`);
}

test("over OCI, no spec.helm.version syncs the highest semver tag and a range the highest matching one, each the commit; a chart tagged only `latest` is a KNV2004 source error, as helm lists semver tags only (Config Sync runs the same helm)", async (t) => {
  const registry = await startRegistry(t);
  await pushChart(t, registry, "charts", webChart("0.3.0"));
  await pushChart(t, registry, "charts", webChart("0.4.0"));
  await copyChart(registry, "charts/web", "0.4.0", "latest-only/web", "latest");
  const name = `helm-ocitag-${suffix()}`;
  const ns = `helm-ocitag-${suffix()}`;
  await ensureNamespace(t, ns);
  await createHelmRootSync(t, name, {
    repo: `oci://${registry.host}/charts`,
    chart: "web",
    namespace: ns,
    ...(await tokenAuth(t, registry)),
  });
  const newest = await rootSynced(name, "0.4.0");
  assert.equal((newest["source"] as JsonObject)["commit"], "0.4.0");
  assert.equal((await configMapData(ns, "release-name-web"))?.["version"], "0.4.0");

  await updateHelm(name, { version: "~0.3.0" });
  const ranged = await rootSynced(name, "0.3.0");
  assert.equal((ranged["source"] as JsonObject)["commit"], "0.3.0");
  assert.equal((await configMapData(ns, "release-name-web"))?.["version"], "0.3.0");

  for (const version of ["", "latest"]) {
    await updateHelm(name, { repo: `oci://${registry.host}/latest-only`, version });
    const error = await sourceErrorMatching(
      name,
      new RegExp(`KNV2004: .*Unable to locate any tags in provided repository: oci://${registry.host}/latest-only/web`),
    );
    assert.equal(error["code"], "2004");
    assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], "0.3.0", `version ${JSON.stringify(version)}`);
    assert.equal((await configMapData(ns, "release-name-web"))?.["version"], "0.3.0", "nothing is deleted");
    // Back to the good repository until the error clears, so the next case's error is its own.
    await updateHelm(name, { repo: `oci://${registry.host}/charts`, version: "~0.3.0" });
    await eventually(
      async () => ((((await rootSyncStatus(name))["source"] as JsonObject)["errors"] ?? []) as unknown[]).length === 0,
      { timeoutMs: 60_000, what: `RootSync ${name}'s source error to clear` },
    );
  }
});

test("new values for the same chart version are applied and not reverted by drift correction, even while the pass that applies them still runs", async (t) => {
  const repo = await startHelmRepo(t);
  // A Deployment never becomes available here (no kubelet): each pass waits reconcileTimeout after its
  // writes, so the watch event of its own write reaches drift correction while the pass still runs.
  await repo.publish(
    webChart("1.0.0", {
      "templates/deployment.yaml": [
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata:",
        "  name: {{ .Release.Name }}-slow",
        "  namespace: {{ .Release.Namespace }}",
        "spec:",
        "  selector: { matchLabels: { app: slow } }",
        "  template:",
        "    metadata: { labels: { app: slow } }",
        "    spec: { containers: [{ name: c, image: registry.invalid/never:1 }] }",
      ].join("\n"),
    }),
  );
  const name = `helm-${suffix()}`;
  const ns = `helm-${suffix()}`;
  await ensureNamespace(t, ns);
  const reconciler = await createHelmRootSync(
    t,
    name,
    {
      repo: repo.url,
      chart: "web",
      version: "1.0.0",
      releaseName: "shop",
      namespace: ns,
      values: { greeting: "first" },
      ...(await tokenAuth(t, repo)),
    },
    { sourceFormat: "unstructured", override: { reconcileTimeout: "3s" } },
  );
  await eventually(async () => (await configMapData(ns, "shop-web"))?.["greeting"] === "first", {
    timeoutMs: 60_000,
    what: "the chart rendered with the first values",
  });

  // Every value the ConfigMap takes from here on, in order.
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => client.close());
  const seen: string[] = [];
  const watch = new Informer(client, configMapMapping, { namespace: ns, fieldSelector: "metadata.name=shop-web" });
  const record = (object: KubeObject): void => {
    const greeting = (object["data"] as Record<string, string> | undefined)?.["greeting"];
    if (greeting !== undefined && seen.at(-1) !== greeting) seen.push(greeting);
  };
  watch.on("add", record);
  watch.on("update", record);
  watch.start();
  t.after(() => watch.stop());

  await updateHelm(name, { values: { greeting: "second" } });
  await eventually(() => seen.includes("second"), { timeoutMs: 60_000, what: "the second values applied" });
  // The pass that wrote them, and the one after it, have ended: whatever drift correction did meanwhile is done.
  const passes = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passes + 2, { timeoutMs: 60_000, what: "two more passes" });
  assert.deepEqual(seen.slice(seen.indexOf("second")), ["second"], "the new values were reverted");
  assert.equal((await configMapData(ns, "shop-web"))?.["greeting"], "second");
});

test("values from a ConfigMap past the 16 watched ones are read at each poll, and new ones are applied under the same chart version", async (t) => {
  const repo = await startHelmRepo(t);
  await repo.publish(webChart("1.0.0"));
  const name = `helm-${suffix()}`;
  const ns = `helm-${suffix()}`;
  await ensureNamespace(t, ns);
  await ensureNamespace(t, rootSyncNamespace);
  const createValues = async (configMap: string, values: string): Promise<void> => {
    await coreApi().createNamespacedConfigMap({
      namespace: rootSyncNamespace,
      body: { metadata: { name: configMap }, immutable: true, data: { "values.yaml": values } },
    });
  };
  const names = Array.from({ length: 17 }, (_, i) => `helm-values-${i}-${suffix()}`);
  const last = names.at(-1)!;
  for (const configMap of names) {
    await createValues(configMap, configMap === last ? "greeting: first\n" : "color: from-file\n");
    cleanUp(t, () => coreApi().deleteNamespacedConfigMap({ name: configMap, namespace: rootSyncNamespace }));
  }
  await createHelmRootSync(t, name, {
    repo: repo.url,
    chart: "web",
    version: "1.0.0",
    releaseName: "shop",
    namespace: ns,
    valuesFileRefs: names.map((configMap) => ({ name: configMap })),
    ...(await tokenAuth(t, repo)),
  });
  await eventually(async () => (await configMapData(ns, "shop-web"))?.["greeting"] === "first", {
    timeoutMs: 60_000,
    what: "the chart rendered with the first values",
  });

  // Immutable: new values are a new ConfigMap under the same name. Unwatched, it is read at the next poll.
  await coreApi().deleteNamespacedConfigMap({ name: last, namespace: rootSyncNamespace });
  await createValues(last, "greeting: second\n");
  await eventually(async () => (await configMapData(ns, "shop-web"))?.["greeting"] === "second", {
    timeoutMs: 30_000,
    what: "the chart rendered again with the new values at a poll",
  });
});

test("a version Go's semver reads as exact (`1.2`, short for v1.2.0) is given to helm as written and is the commit, where Config Sync resolves only ranges", async (t) => {
  const repo = await startHelmRepo(t);
  await repo.publish(webChart("1.2.0"));
  await repo.publish(webChart("1.2.5"));
  const name = `helm-short-${suffix()}`;
  const ns = `helm-short-${suffix()}`;
  await ensureNamespace(t, ns);
  await createHelmRootSync(t, name, {
    repo: repo.url,
    chart: "web",
    version: "1.2",
    namespace: ns,
    ...(await tokenAuth(t, repo)),
  });
  // Config Sync's isRange: semver.IsValid("v1.2") holds, so no `helm show chart`: the spec's version is the commit.
  const status = await rootSynced(name, "1.2");
  assert.equal((status["source"] as JsonObject)["commit"], "1.2");
  // helm reads `--version 1.2` as the constraint 1.2.x and renders the highest.
  assert.equal((await configMapData(ns, "release-name-web"))?.["version"], "1.2.5");
});

test("a chart version that does not exist and a wrong password are KNV2004 source errors, and nothing synced before is deleted", async (t) => {
  const repo = await startHelmRepo(t);
  await repo.publish(webChart("1.0.0"));
  const name = `helm-bad-${suffix()}`;
  const ns = `helm-bad-${suffix()}`;
  await ensureNamespace(t, ns);
  const good = await secret(t, { username: repo.username, password: repo.password });
  const wrong = await secret(t, { username: repo.username, password: "not-the-password" });
  await createHelmRootSync(t, name, {
    repo: repo.url,
    chart: "web",
    version: "1.0.0",
    releaseName: "keep",
    namespace: ns,
    auth: "token",
    secretRef: { name: good },
    caCertSecretRef: { name: await secret(t, { cert: repo.caCert }) },
  });
  await rootSynced(name, "1.0.0");

  const cases: [JsonObject, RegExp][] = [
    // helm's words for `helm template --repo <url>`, as Config Sync runs it.
    [
      { version: "9.9.9" },
      new RegExp(`KNV2004: .*chart "web" version "9\\.9\\.9" not found in ${repo.url} repository`),
    ],
    [
      { version: "1.0.0", secretRef: { name: wrong } },
      new RegExp(
        `KNV2004: .*Error: looks like "${repo.url}" is not a valid chart repository or cannot be reached: failed to fetch ${repo.url}/index\\.yaml : 401 Unauthorized`,
      ),
    ],
  ];
  for (const [change, pattern] of cases) {
    await updateHelm(name, change);
    const error = await sourceErrorMatching(name, pattern);
    assert.equal(error["code"], "2004");
    t.diagnostic(String(error["errorMessage"]));
    assert.doesNotMatch(String(error["errorMessage"]), /not-the-password/, "the password never reaches status");
    assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], "1.0.0");
    assert.equal(
      (await configMapData(ns, "keep-web"))?.["version"],
      "1.0.0",
      `nothing is deleted after ${JSON.stringify(change)}`,
    );
  }
});

test("a RepoSync's chart is released into its namespace with values from its own immutable ConfigMap; a missing, mutable or keyless one is refused in Config Sync's words (KNV1061) on status.source", async (t) => {
  const repo = await startHelmRepo(t);
  await repo.publish(webChart("1.0.0"));
  const ns = `helm-repo-${suffix()}`;
  await ensureNamespace(t, ns);
  const valuesConfigMap = async (immutable: boolean, key = "custom.yaml"): Promise<string> => {
    const name = `values-${suffix()}`;
    await coreApi().createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name }, immutable, data: { [key]: "greeting: team-values\n" } },
    });
    return name;
  };
  const missing = `values-${suffix()}`;
  const helm = {
    repo: repo.url,
    chart: "web",
    version: "1.0.0",
    releaseName: "team",
    valuesFileRefs: [{ name: missing, dataKey: "custom.yaml" }],
    ...(await tokenAuth(t, repo, ns)),
  };
  const repoSyncs = { group: "configsync.gke.io", version: "v1beta1", namespace: ns, plural: "reposyncs" };
  const status = async (): Promise<JsonObject> =>
    (((await customApi().getNamespacedCustomObject({ ...repoSyncs, name: "repo-sync" })) as JsonObject)["status"] ??
      {}) as JsonObject;
  const valuesFrom = (name: string): Promise<boolean> =>
    eventually(
      async () => {
        const current = (await customApi().getNamespacedCustomObject({
          ...repoSyncs,
          name: "repo-sync",
        })) as JsonObject;
        const spec = { sourceType: "helm", helm: { ...helm, valuesFileRefs: [{ name, dataKey: "custom.yaml" }] } };
        try {
          await customApi().replaceNamespacedCustomObject({
            ...repoSyncs,
            name: "repo-sync",
            body: { ...current, spec },
          });
          return true;
        } catch (error) {
          if (statusCode(error) === 409) return false;
          throw error;
        }
      },
      { what: `the RepoSync to take values from ${name}` },
    );
  const refused = async (message: string): Promise<void> => {
    const error = await eventually(
      async () => {
        const errors = (((await status())["source"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];
        return errors.find((e) => String(e["errorMessage"]).includes(message));
      },
      { timeoutMs: 60_000, what: `the RepoSync to report ${message}` },
    );
    assert.equal(error["code"], "1061");
  };
  await customApi().createNamespacedCustomObject({
    ...repoSyncs,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace: ns },
      spec: { sourceType: "helm", helm },
    },
  });
  await startReconciler(t, { kind: "RepoSync", namespace: ns, name: "repo-sync" }, { renderToolsDir });
  // Config Sync's TestHelmConfigMapNamespaceRepo, one spec change at a time (it also watches the ConfigMaps).
  const words = "KNV1061: RepoSyncs must reference valid ConfigMaps in spec.helm.valuesFileRefs: ConfigMap";
  await refused(`${words} "${missing}" not found`);
  const mutable = await valuesConfigMap(false);
  await valuesFrom(mutable);
  await refused(`${words} "${mutable}" in namespace "${ns}" is not immutable`);
  const keyless = await valuesConfigMap(true, "values.yaml");
  await valuesFrom(keyless);
  await refused(`${words} "${keyless}" in namespace "${ns}" does not have data key "custom.yaml"`);

  await valuesFrom(await valuesConfigMap(true));
  await eventually(async () => (await status())["lastSyncedCommit"] === "1.0.0", {
    timeoutMs: 60_000,
    what: "the RepoSync synced at chart version 1.0.0",
  });
  assert.deepEqual(await configMapData(ns, "team-web"), {
    greeting: "team-values",
    color: "chart-default",
    version: "1.0.0",
  });
});

test("the API server refuses a releaseName or chart helm would read as a flag, on a RootSync and a RepoSync", async (t) => {
  await ensureNamespace(t, rootSyncNamespace);
  const ns = `helm-flag-${suffix()}`;
  await ensureNamespace(t, ns);
  const helm = { repo: "https://charts.example", chart: "web", auth: "none" };
  for (const bad of [{ releaseName: "--set-file=leak=/etc/hostname" }, { chart: "--post-renderer=/bin/sh" }]) {
    for (const [kind, plural, namespace] of [
      ["RootSync", "rootsyncs", rootSyncNamespace],
      ["RepoSync", "reposyncs", ns],
    ] as const) {
      const created = customApi().createNamespacedCustomObject({
        group: "configsync.gke.io",
        version: "v1beta1",
        namespace,
        plural,
        body: {
          apiVersion: "configsync.gke.io/v1beta1",
          kind,
          metadata: { name: `flag-${suffix()}`, namespace },
          spec: { sourceType: "helm", helm: { ...helm, ...bad } },
        },
      });
      await assert.rejects(created, (error: unknown) => {
        assert.equal(statusCode(error), 422, `${kind} ${JSON.stringify(bad)}`);
        assert.match(String((error as { body?: unknown }).body ?? error), /spec\.helm\.(releaseName|chart)/);
        return true;
      });
    }
  }
});

test("a Helm RootSync without spec.sourceFormat fails with KNV1017 (read as a hierarchy, Config Sync's default) and the message says such sources usually set sourceFormat: unstructured", async (t) => {
  const repo = await startHelmRepo(t);
  await repo.publish(webChart("1.0.0"));
  const name = `helm-format-${suffix()}`;
  const ns = `helm-${suffix()}`;
  await ensureNamespace(t, ns);
  await createHelmRootSync(
    t,
    name,
    {
      repo: repo.url,
      chart: "web",
      version: "1.0.0",
      namespace: ns,
      ...(await tokenAuth(t, repo)),
    },
    {},
  );
  const error = await sourceErrorMatching(name, /system/);
  assert.equal(error["code"], "1017");
  assert.match(String(error["errorMessage"]), /Helm and OCI sources usually set spec\.sourceFormat: unstructured/);
});
