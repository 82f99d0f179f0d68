/**
 * spec.helm.caCertSecretRef, as Config Sync's e2e TestHelmCACertSecretRefRootRepo checks it: a chart repository or
 * registry whose CA the sync does not name is a KNV2004 source error in Go's words, and naming the CA syncs it.
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
  rootSyncSecret,
} from "../../support/index.ts";
import { pushChart, startHelmRepo, type ChartFiles } from "../../support/helm-repo.ts";
import { startRegistry } from "../../support/registry.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();

const chart: ChartFiles = {
  name: "trusted",
  version: "1.0.0",
  files: {
    "templates/configmap.yaml": [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: trusted",
      "  namespace: {{ .Release.Namespace }}",
      "data:",
      "  from: chart",
    ].join("\n"),
  },
};

async function secret(t: TestContext, stringData: Record<string, string>): Promise<string> {
  const name = `helm-ca-${suffix()}`;
  await rootSyncSecret(t, name, stringData);
  return name;
}

async function configMapExists(namespace: string): Promise<boolean> {
  try {
    await coreApi().readNamespacedConfigMap({ namespace, name: "trusted" });
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

/** Creates the RootSync without a CA, waits for the TLS error, names the CA and waits for the sync. */
async function untrustedThenTrusted(
  t: TestContext,
  server: { repo: string; username: string; password: string; caCert: string },
): Promise<void> {
  const name = `helm-ca-${suffix()}`;
  const ns = `helm-ca-${suffix()}`;
  await ensureNamespace(t, rootSyncNamespace);
  await ensureNamespace(t, ns);
  const credentials = await secret(t, { username: server.username, password: server.password });
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
          repo: server.repo,
          chart: chart.name,
          version: chart.version,
          namespace: ns,
          auth: "token",
          secretRef: { name: credentials },
        },
      },
    },
  });
  t.after(() =>
    customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined),
  );
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { renderToolsDir });

  const error = await eventually(
    async () => {
      const source = (await rootSyncStatus(name))["source"] as JsonObject | undefined;
      return ((source?.["errors"] ?? []) as JsonObject[]).find((e) =>
        // Config Sync's e2e waits for these words, Go's TLS stack's, from its helm-sync.
        String(e["errorMessage"]).includes(
          "tls: failed to verify certificate: x509: certificate signed by unknown authority",
        ),
      );
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report the untrusted certificate` },
  );
  assert.equal(error["code"], "2004");
  assert.equal(await configMapExists(ns), false);

  const ca = await secret(t, { cert: server.caCert });
  await updateRootSyncSpec(name, (spec) => ({
    ...spec,
    helm: { ...(spec["helm"] as JsonObject), caCertSecretRef: { name: ca } },
  }));
  await rootSynced(name, chart.version);
  assert.equal(await configMapExists(ns), true);
}

test("a chart repository over HTTPS whose CA the sync does not name is KNV2004 'x509: certificate signed by unknown authority', and it syncs once spec.helm.caCertSecretRef names the CA", async (t) => {
  const repo = await startHelmRepo(t);
  await repo.publish(chart);
  await untrustedThenTrusted(t, { ...repo, repo: repo.url });
});

test("a chart in an OCI registry whose CA the sync does not name is KNV2004 'x509: certificate signed by unknown authority', and it syncs once spec.helm.caCertSecretRef names the CA", async (t) => {
  const registry = await startRegistry(t);
  await pushChart(t, registry, "charts", chart);
  await untrustedThenTrusted(t, { ...registry, repo: `oci://${registry.host}/charts` });
});
