/**
 * The RootSync and RepoSync CRDs refuse, under kubectl's strict field validation, what Config Sync's CRDs
 * refuse: a RootSync-only field on a RepoSync and a misspelt field under spec.oci, spec.helm or
 * spec.override. Stored and then ignored, such a field would look set and change nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { KubeApiError, KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { testEnv } from "../../support/env.ts";
import { suffix, testNamespace } from "../../support/kube.ts";

type SyncKind = "RootSync" | "RepoSync";
const versions = ["v1beta1", "v1alpha1"] as const;

function mapping(kind: SyncKind, version: string): ResourceMapping {
  const resource = kind === "RootSync" ? "rootsyncs" : "reposyncs";
  return { group: "configsync.gke.io", version, kind, resource, namespaced: true, verbs: [] };
}

let admin: Promise<KubeClient> | undefined;
const client = (): Promise<KubeClient> => (admin ??= KubeClient.fromKubeconfig(testEnv().kubeconfig));

function sync(kind: SyncKind, version: string, namespace: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: `configsync.gke.io/${version}`,
    kind,
    metadata: { name: `sync-${suffix()}`, namespace },
    spec,
  };
}

/** Creates `obj` as `kubectl apply` would (strict field validation); the server's refusal, or undefined. */
async function createStrict(obj: KubeObject): Promise<KubeApiError | undefined> {
  const m = mapping(obj.kind as SyncKind, obj.apiVersion.split("/")[1] ?? "");
  try {
    await (await client()).create(m, obj, { fieldValidation: "Strict" });
    return undefined;
  } catch (error) {
    if (error instanceof KubeApiError) return error;
    throw error;
  }
}

async function assertRefused(obj: KubeObject, field: string): Promise<void> {
  const refusal = await createStrict(obj);
  const what = `${obj.kind} ${obj.apiVersion} with ${field}`;
  assert.ok(refusal !== undefined, `${what} was accepted`);
  assert.equal(refusal.status, 400, `${what}: ${refusal.message}`);
  assert.ok(refusal.serverMessage.includes(`unknown field "${field}"`), `${what}: ${refusal.serverMessage}`);
}

const gitSource = { repo: "https://git.example.com/team/config.git", auth: "none" };
const helmSource = { repo: "https://charts.example", chart: "web", auth: "none" };
const ociSource = { image: "registry.example/config:v1", auth: "none" };

test("a RepoSync carrying a RootSync-only field is refused under strict field validation, in both versions", async (t) => {
  const namespace = await testNamespace(t, "strict");
  const cases: readonly [string, Record<string, unknown>][] = [
    ["spec.helm.namespace", { sourceType: "helm", helm: { ...helmSource, namespace: "web" } }],
    ["spec.helm.deployNamespace", { sourceType: "helm", helm: { ...helmSource, deployNamespace: "web" } }],
    ["spec.override.roleRefs", { git: gitSource, override: { roleRefs: [{ kind: "ClusterRole", name: "admin" }] } }],
    ["spec.override.namespaceStrategy", { git: gitSource, override: { namespaceStrategy: "explicit" } }],
  ];
  for (const version of versions) {
    for (const [field, spec] of cases) await assertRefused(sync("RepoSync", version, namespace, spec), field);
  }
});

test("a misspelt field under spec.oci, spec.helm or spec.override is refused on both kinds under strict field validation", async (t) => {
  const namespace = await testNamespace(t, "typo");
  const cases: readonly [string, Record<string, unknown>][] = [
    ["spec.oci.perod", { sourceType: "oci", oci: { ...ociSource, perod: "1m" } }],
    ["spec.helm.valueFiles", { sourceType: "helm", helm: { ...helmSource, valueFiles: [{ name: "values" }] } }],
    ["spec.helm.releasename", { sourceType: "helm", helm: { ...helmSource, releasename: "web" } }],
    ["spec.override.reconcileTimout", { git: gitSource, override: { reconcileTimout: "10m" } }],
    ["spec.override.resources[0].cpuLimits", { git: gitSource, override: { resources: [{ cpuLimits: "1" }] } }],
  ];
  for (const kind of ["RootSync", "RepoSync"] as const) {
    for (const [field, spec] of cases) await assertRefused(sync(kind, "v1beta1", namespace, spec), field);
  }
});

test("without strict validation the API server drops a RepoSync's roleRefs, so no reconciler ever reads them", async (t) => {
  const namespace = await testNamespace(t, "pruned");
  const obj = sync("RepoSync", "v1beta1", namespace, {
    git: gitSource,
    override: { roleRefs: [{ kind: "ClusterRole", name: "admin" }], reconcileTimeout: "10m" },
  });
  const created = await (await client()).create(mapping("RepoSync", "v1beta1"), obj);
  assert.deepEqual((created["spec"] as { override?: unknown }).override, { reconcileTimeout: "10m" });
});

test("spec.git.auth k8sserviceaccount is refused by both CRDs in both versions, as Config Sync's Git enum has no such value; OCI and Helm take it", async (t) => {
  const namespace = await testNamespace(t, "gitauth");
  for (const kind of ["RootSync", "RepoSync"] as const) {
    for (const version of versions) {
      const refusal = await createStrict(
        sync(kind, version, namespace, { git: { ...gitSource, auth: "k8sserviceaccount" } }),
      );
      const what = `${kind} ${version} with spec.git.auth k8sserviceaccount`;
      assert.ok(refusal !== undefined, `${what} was accepted`);
      assert.equal(refusal.status, 422, `${what}: ${refusal.message}`);
      assert.ok(refusal.serverMessage.includes("spec.git.auth"), `${what}: ${refusal.serverMessage}`);
    }
    for (const spec of [
      { sourceType: "oci", oci: { ...ociSource, auth: "k8sserviceaccount" } },
      { sourceType: "helm", helm: { ...helmSource, auth: "k8sserviceaccount" } },
    ])
      assert.equal(await createStrict(sync(kind, "v1beta1", namespace, spec)), undefined, `${kind} ${spec.sourceType}`);
  }
});

test("a source URL over 2048 characters (spec.git.repo, spec.oci.image, spec.helm.repo) is refused by both CRDs; 2048 is accepted", async (t) => {
  // Every webhook push keys every sync's URL: a tenant's megabyte-long URL would cost the manager on each push.
  const namespace = await testNamespace(t, "urllen");
  const long = (prefix: string, length: number): string => prefix + "a".repeat(length - prefix.length);
  const cases: readonly [string, (length: number) => Record<string, unknown>][] = [
    ["spec.git.repo", (n) => ({ git: { ...gitSource, repo: long("https://git.example.com/", n) } })],
    ["spec.oci.image", (n) => ({ sourceType: "oci", oci: { ...ociSource, image: long("registry.example/", n) } })],
    [
      "spec.helm.repo",
      (n) => ({ sourceType: "helm", helm: { ...helmSource, repo: long("oci://charts.example/", n) } }),
    ],
  ];
  for (const kind of ["RootSync", "RepoSync"] as const) {
    for (const [field, spec] of cases) {
      const refusal = await createStrict(sync(kind, "v1beta1", namespace, spec(4096)));
      assert.ok(refusal !== undefined, `${kind} with a 4 KiB ${field} was accepted`);
      assert.equal(refusal.status, 422, `${kind} ${field}: ${refusal.message}`);
      assert.ok(refusal.serverMessage.includes(field), `${kind} ${field}: ${refusal.serverMessage}`);
      assert.ok(refusal.serverMessage.includes("2048"), `${kind} ${field}: ${refusal.serverMessage}`);
      assert.equal(
        await createStrict(sync(kind, "v1beta1", namespace, spec(2048))),
        undefined,
        `${kind} ${field} at 2048`,
      );
    }
  }
});

/** Every field of Config Sync's RepoSync spec (git, oci and helm at once: the CRD leaves that to the manager). */
const repoSyncSpec = `
sourceFormat: unstructured
sourceType: git
git:
  repo: https://git.example.com/team/config.git
  branch: main
  revision: v1.2.0
  dir: config
  period: 30s
  auth: token
  gcpServiceAccountEmail: syncer@example.iam.gserviceaccount.com
  proxy: https://proxy.example.com:3128
  secretRef: {name: git-creds}
  noSSLVerify: false
  caCertSecretRef: {name: git-ca}
oci:
  image: registry.example/config:v1
  dir: config
  period: 1m
  auth: gcpserviceaccount
  gcpServiceAccountEmail: syncer@example.iam.gserviceaccount.com
  caCertSecretRef: {name: oci-ca}
helm:
  repo: https://charts.example
  chart: web
  version: 1.2.x
  releaseName: web
  values:
    replicaCount: 3
    image: {tag: latest, pullPolicy: IfNotPresent}
  valuesFileRefs:
  - {name: prod-values, dataKey: values.yaml}
  includeCRDs: true
  period: 0s
  auth: token
  gcpServiceAccountEmail: syncer@example.iam.gserviceaccount.com
  secretRef: {name: helm-creds}
  caCertSecretRef: {name: helm-ca}
override:
  resources:
  - {containerName: reconciler, cpuRequest: 500m, memoryRequest: 1Gi, cpuLimit: 1, memoryLimit: 2Gi}
  gitSyncDepth: 0
  statusMode: enabled
  reconcileTimeout: 10m
  apiServerTimeout: 30s
  enableShellInRendering: false
  logLevels:
  - {containerName: reconciler, logLevel: 5}
`;

/** A RootSync has the RepoSync's fields and its own four. */
function rootSyncSpec(): Record<string, unknown> {
  const spec = parseYaml(repoSyncSpec) as Record<string, Record<string, unknown>>;
  return {
    ...spec,
    sourceFormat: "hierarchy",
    helm: { ...spec["helm"], namespace: "web" },
    override: {
      ...spec["override"],
      roleRefs: [
        { kind: "ClusterRole", name: "edit" },
        { kind: "Role", name: "admin", namespace: "shop" },
      ],
      namespaceStrategy: "explicit",
    },
  };
}

test("a Config Sync manifest setting every field of its kind is accepted under strict field validation and stored as sent", async (t) => {
  const namespace = await testNamespace(t, "full");
  const specs = { RepoSync: () => parseYaml(repoSyncSpec) as Record<string, unknown>, RootSync: rootSyncSpec };
  for (const version of versions) {
    for (const kind of ["RootSync", "RepoSync"] as const) {
      const obj = sync(kind, version, namespace, specs[kind]());
      const refusal = await createStrict(obj);
      assert.equal(refusal, undefined, `${kind} ${version}: ${refusal?.message}`);
      const stored = await (await client()).get(mapping(kind, version), namespace, obj.metadata.name);
      // The API server writes quantities as sent; nothing may be pruned or defaulted away.
      assert.deepEqual(stored?.["spec"], obj["spec"], `${kind} ${version}`);
    }
  }
  // helm.namespace and helm.deployNamespace exclude each other (the parser's rule): the second on its own.
  const deploy = rootSyncSpec();
  const { namespace: _releaseNamespace, ...helm } = deploy["helm"] as Record<string, unknown>;
  const withDeploy = { ...deploy, helm: { ...helm, deployNamespace: "web" } };
  assert.equal(await createStrict(sync("RootSync", "v1beta1", namespace, withDeploy)), undefined);
});
