/**
 * A sync's source changed under it, as Config Sync's e2e TestSwitchFromGitToOci* and TestPublicOCI change it:
 * from git to an OCI image, and from an image's root to another of its directories, kustomizations included.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { tarGz } from "@driftless/oci/testing";
import {
  coreApi,
  createRootSync,
  customApi,
  ensureNamespace,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  startReconciler,
  statusCode,
  suffix,
  TestRepo,
  type JsonObject,
  updateRootSyncSpec,
} from "../../support/index.ts";
import { pushImage, startRegistry, type Registry } from "../../support/registry.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();
const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);
const hex = (digest: string): string => digest.replace(/^sha256:/, "");

/** spec.oci's token auth for `registry`: Secrets holding its user and its CA, removed after the test. */
async function registryAuth(t: TestContext, registry: Registry): Promise<JsonObject> {
  await ensureNamespace(t, rootSyncNamespace);
  const secret = async (data: Record<string, string>): Promise<string> => {
    const name = `oci-switch-${suffix()}`;
    await coreApi().createNamespacedSecret({
      namespace: rootSyncNamespace,
      body: { metadata: { name }, stringData: data },
    });
    t.after(() =>
      coreApi()
        .deleteNamespacedSecret({ name, namespace: rootSyncNamespace })
        .catch(() => undefined),
    );
    return name;
  };
  return {
    auth: "token",
    secretRef: { name: await secret({ username: registry.username, password: registry.password }) },
    caCertSecretRef: { name: await secret({ cert: registry.caCert }) },
  };
}

async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

test("a RootSync switched from git to an OCI image applies the image's objects and prunes what git declared; status names the image alone", async (t) => {
  const registry = await startRegistry(t);
  const ns = `oci-switch-${suffix()}`;
  await ensureNamespace(t, ns);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/sa.yaml",
    yaml({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "from-git", namespace: ns } }),
  );
  const commit = await repo.commit("a ServiceAccount");
  const name = `oci-switch-${suffix()}`;
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);

  const role = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "from-oci", namespace: ns },
  };
  const digest = await pushImage(registry, "config/app", "v1", [tarGz([{ name: "role.yaml", content: yaml(role) }])]);
  const auth = await registryAuth(t, registry);
  await updateRootSyncSpec(name, (spec) => {
    const { git: _git, ...rest } = spec;
    return { ...rest, sourceType: "oci", oci: { image: `${registry.host}/config/app:v1`, ...auth } };
  });
  const status = await rootSynced(name, hex(digest));
  assert.ok(
    (await exists(() => coreApi().readNamespacedServiceAccount({ namespace: ns, name: "from-git" }))) === false,
  );
  const rbac = { group: "rbac.authorization.k8s.io", version: "v1", namespace: ns, plural: "roles", name: "from-oci" };
  assert.ok(await exists(() => customApi().getNamespacedCustomObject(rbac)));
  for (const phase of ["source", "rendering", "sync"]) {
    const block = status[phase] as JsonObject;
    assert.equal(block["gitStatus"], undefined, phase);
    assert.deepEqual(block["ociStatus"], { image: `${registry.host}/config/app:v1`, dir: "." }, phase);
  }
});

test("kustomizations inside an image are rendered, at its root and, once spec.oci.dir names it, at a tenant directory whose kustomization reaches ../base", async (t) => {
  const registry = await startRegistry(t);
  const [tenantA, tenantB] = [`oci-tenant-a-${suffix()}`, `oci-tenant-b-${suffix()}`];
  for (const ns of [tenantA, tenantB])
    t.after(() =>
      coreApi()
        .deleteNamespace({ name: ns })
        .catch(() => undefined),
    );
  const tenant = (ns: string): { name: string; content: string }[] => [
    { name: `${ns}/kustomization.yaml`, content: `namespace: ${ns}\nresources:\n- ns.yaml\n- ../base\n` },
    { name: `${ns}/ns.yaml`, content: yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }) },
  ];
  const digest = await pushImage(registry, "config/tenants", "v1", [
    tarGz([
      { name: "kustomization.yaml", content: `resources:\n- ${tenantA}\n- ${tenantB}\n` },
      { name: "base/kustomization.yaml", content: "resources:\n- cm.yaml\n" },
      { name: "base/cm.yaml", content: yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shared" } }) },
      ...tenant(tenantA),
      ...tenant(tenantB),
    ]),
  ]);
  const name = `oci-tenants-${suffix()}`;
  const image = `${registry.host}/config/tenants@${digest}`;
  await customApi().createNamespacedCustomObject({
    ...rootSyncs,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name, namespace: rootSyncNamespace },
      spec: { sourceFormat: "unstructured", sourceType: "oci", oci: { image, ...(await registryAuth(t, registry)) } },
    },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { renderToolsDir });
  const status = await rootSynced(name, hex(digest));
  assert.equal((status["rendering"] as JsonObject)["message"], "Rendering succeeded");
  const shared = (ns: string): Promise<boolean> =>
    exists(() => coreApi().readNamespacedConfigMap({ namespace: ns, name: "shared" }));
  assert.ok((await shared(tenantA)) && (await shared(tenantB)), "both tenants rendered from the root");

  await updateRootSyncSpec(name, (spec) => ({ ...spec, oci: { ...(spec["oci"] as JsonObject), dir: tenantA } }));
  await eventually(async () => (await shared(tenantB)) === false || undefined, {
    timeoutMs: 60_000,
    what: `tenant ${tenantB}'s ConfigMap pruned once only ${tenantA} is synced`,
  });
  assert.ok(await shared(tenantA), `${tenantA} rendered alone, its base reached through ../base`);
});
