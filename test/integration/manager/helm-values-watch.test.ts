/**
 * spec.helm.valuesFileRefs watched as Config Sync watches them (its TestHelmWatchConfigMap and
 * TestHelmConfigMapNamespaceRepo): a reconciler under the manager's RBAC, with spec.helm.period at 1 h,
 * renders again as soon as a ConfigMap it names appears or is replaced, not at its next poll.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isForbidden, type KubeObject } from "@driftless/kube";
import { nsReconcilerName } from "@driftless/api";
import { eventually, suffix } from "../../support/index.ts";
import { startHelmRepo, type ChartFiles } from "../../support/helm-repo.ts";
import {
  admin,
  clientAs,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  startManager,
  synced,
  systemNamespace,
  type SourceError,
} from "./helpers.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

// helm for the reconcilers the manager starts (they find the newest build in .local/bin).
buildRenderTools();

/** A chart rendering one ServiceAccount whose annotation shows the values it was rendered with. */
const chart: ChartFiles = {
  name: "web",
  version: "1.0.0",
  files: {
    "values.yaml": "greeting: chart-default\n",
    "templates/serviceaccount.yaml": [
      "apiVersion: v1",
      "kind: ServiceAccount",
      "metadata:",
      "  name: {{ .Release.Name }}-web",
      "  annotations:",
      "    greeting: {{ .Values.greeting | quote }}",
    ].join("\n"),
  },
};

test("a RepoSync renders again as soon as a valuesFileRefs ConfigMap is created or replaced, with spec.helm.period at 1h, watching only that ConfigMap", async (t) => {
  // Before the manager: its after-hook, which fails the test if a deletion is left unfinished, would skip this one's.
  const repo = await startHelmRepo(t);
  await repo.publish(chart);
  const manager = await startManager(t);
  const ns = await createNamespace(t, "helm-values");
  const client = await admin();
  const reconciler = nsReconcilerName(ns, "repo-sync");
  // What the namespace's admin grants: ServiceAccounts only, so ConfigMaps are what the manager's Role allows.
  await client.create(Mapping.Role, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "service-accounts", namespace: ns },
    rules: [{ apiGroups: [""], resources: ["serviceaccounts"], verbs: ["*"] }],
  });
  await client.create(Mapping.RoleBinding, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "service-accounts", namespace: ns },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "service-accounts" },
    subjects: [{ kind: "ServiceAccount", name: reconciler, namespace: systemNamespace }],
  });
  const secret = async (data: Record<string, string>): Promise<string> => {
    const name = `helm-${suffix()}`;
    await client.create(Mapping.Secret, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: ns },
      stringData: data,
    });
    return name;
  };
  const values = `values-${suffix()}`;
  await createSync(t, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace: ns, labels: { ...manager.scope.labels } },
    spec: {
      sourceFormat: "unstructured",
      sourceType: "helm",
      helm: {
        repo: repo.url,
        chart: "web",
        version: "1.0.0",
        releaseName: "team",
        period: "1h",
        valuesFileRefs: [{ name: values, dataKey: "custom.yaml" }],
        auth: "token",
        secretRef: { name: await secret({ username: repo.username, password: repo.password }) },
        caCertSecretRef: { name: await secret({ cert: repo.caCert }) },
      },
    },
  });
  const refused = (): Promise<SourceError> =>
    eventually(
      async () => {
        const status = ((await getSync("RepoSync", ns, "repo-sync"))?.["status"] ?? {}) as {
          source?: { errors?: SourceError[] };
        };
        return status.source?.errors?.find((e) => e.errorMessage?.includes(`ConfigMap "${values}" not found`));
      },
      { timeoutMs: 90_000, what: `the RepoSync to report ConfigMap ${values} not found` },
    );
  const createValues = (greeting: string): Promise<KubeObject> =>
    client.create(Mapping.ConfigMap, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: values, namespace: ns },
      immutable: true,
      data: { "custom.yaml": `greeting: ${greeting}\n` },
    });
  const greeting = async (): Promise<string | undefined> =>
    (await getObject(Mapping.ServiceAccount, ns, "team-web"))?.metadata.annotations?.["greeting"];

  assert.equal((await refused()).code, "1061");
  await createValues("first");
  await synced("RepoSync", ns, "repo-sync", "1.0.0");
  assert.equal(await greeting(), "first");

  // Immutable: new values are a new ConfigMap under the same name.
  await client.delete(Mapping.ConfigMap, ns, values);
  await refused();
  await createValues("second");
  await eventually(async () => (await greeting()) === "second", {
    timeoutMs: 60_000,
    what: "the chart rendered again with the re-created ConfigMap's values",
  });
  await synced("RepoSync", ns, "repo-sync", "1.0.0");

  // The reconciler's watch is the one its Role allows: that ConfigMap by name, not the namespace's.
  const asReconciler = await clientAs(reconciler);
  const one = await asReconciler.list(Mapping.ConfigMap, { namespace: ns, fieldSelector: `metadata.name=${values}` });
  assert.deepEqual(
    one.items.map((o) => o.metadata.name),
    [values],
  );
  await assert.rejects(asReconciler.list(Mapping.ConfigMap, { namespace: ns }), (error) => isForbidden(error));
});
