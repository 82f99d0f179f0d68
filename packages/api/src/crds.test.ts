import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { setCondition } from "./conditions.ts";
import { schemaViolations, structuralProblems } from "./crd-schema-check.ts";
import type { JsonSchemaProps } from "./crd-schema.ts";
import { crdFiles, repoSyncCrd, resourceGroupCrd, rootSyncCrd, type CustomResourceDefinition } from "./crds.ts";
import { DriftlessError, ErrorClass, KnvCode } from "./errors.ts";
import { crdDirectory } from "./generate-crds.ts";
import { statusErrors } from "./status.ts";

function schemaOf(crd: CustomResourceDefinition, version = crd.spec.versions[0]?.name): JsonSchemaProps {
  const found = crd.spec.versions.find((v) => v.name === version);
  assert.ok(found, `${crd.metadata.name} has no version ${version}`);
  return found.schema.openAPIV3Schema;
}

function assertAccepted(crd: CustomResourceDefinition, manifest: string): void {
  const object: unknown = parseYaml(manifest);
  for (const version of crd.spec.versions) {
    assert.deepEqual(
      schemaViolations(object, schemaOf(crd, version.name)),
      [],
      `${crd.spec.names.kind} ${version.name}`,
    );
  }
}

/** Every version of `crd` refuses `object` (apiVersion and metadata added) for exactly these reasons. */
function assertRefused(crd: CustomResourceDefinition, object: Record<string, unknown>, reasons: string[]): void {
  for (const version of crd.spec.versions) {
    const full = { apiVersion: `configsync.gke.io/${version.name}`, metadata: {}, ...object };
    assert.deepEqual(
      schemaViolations(full, schemaOf(crd, version.name)),
      reasons,
      `${crd.spec.names.kind} ${version.name}`,
    );
  }
}

void describe("manifests/crds", () => {
  void it("holds exactly the generated CRD files, one document each, identical to crds.ts", async () => {
    const files = (await readdir(crdDirectory)).sort();
    assert.deepEqual(files, crdFiles.map((f) => f.file).sort());
    for (const { file, crd } of crdFiles) {
      const docs = parseAllDocuments(await readFile(join(crdDirectory, file), "utf8"));
      assert.equal(docs.length, 1, file);
      const [doc] = docs;
      assert.deepEqual(doc?.errors, [], file);
      assert.deepEqual(
        doc?.toJS(),
        JSON.parse(JSON.stringify(crd)),
        `${file} is stale: run node packages/api/src/generate-crds.ts`,
      );
    }
  });

  for (const { file, crd } of crdFiles) {
    void it(`${file}: apiextensions.k8s.io/v1, status subresource and a structural schema in every version`, () => {
      assert.equal(crd.apiVersion, "apiextensions.k8s.io/v1");
      assert.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`);
      assert.equal(crd.spec.versions.filter((v) => v.storage).length, 1);
      for (const version of crd.spec.versions) {
        assert.ok(version.served);
        assert.deepEqual(version.subresources.status, {});
        assert.deepEqual(structuralProblems(version.schema.openAPIV3Schema), [], `${file} ${version.name}`);
      }
    });
  }

  void it("serves RootSync and RepoSync as v1beta1 (stored) and v1alpha1 with the same schema", () => {
    for (const crd of [rootSyncCrd, repoSyncCrd]) {
      assert.deepEqual(
        crd.spec.versions.map((v) => [v.name, v.storage]),
        [
          ["v1beta1", true],
          ["v1alpha1", false],
        ],
      );
      assert.deepEqual(schemaOf(crd, "v1alpha1"), schemaOf(crd, "v1beta1"));
      assert.deepEqual(crd.spec.conversion, { strategy: "None" });
    }
  });

  void it("shows Config Sync's printer columns", () => {
    const columns = rootSyncCrd.spec.versions[0]?.additionalPrinterColumns.map((c) => c.name);
    assert.deepEqual(columns, [
      "RenderingCommit",
      "RenderingErrorCount",
      "SourceCommit",
      "SourceErrorCount",
      "SyncCommit",
      "SyncErrorCount",
      "Age",
    ]);
  });
});

void describe("Config Sync manifests are accepted unchanged (strict field validation)", () => {
  void it("RootSync from a public repo, no auth", () => {
    assertAccepted(
      rootSyncCrd,
      `
apiVersion: configsync.gke.io/v1beta1
kind: RootSync
metadata:
  name: root-sync
  namespace: config-management-system
spec:
  sourceFormat: unstructured
  git:
    repo: https://github.com/GoogleCloudPlatform/anthos-config-management-samples
    branch: main
    dir: quickstart/multirepo/root
    auth: none
    period: 30s
`,
    );
  });

  void it("RootSync with token auth, CA cert, proxy, overrides and role refs", () => {
    assertAccepted(
      rootSyncCrd,
      `
apiVersion: configsync.gke.io/v1beta1
kind: RootSync
metadata:
  name: platform
  namespace: config-management-system
  annotations:
    configsync.gke.io/deletion-propagation-policy: Foreground
spec:
  sourceType: git
  sourceFormat: hierarchy
  git:
    repo: https://git.example.com/platform/config.git
    revision: v1.2.3
    dir: /clusters/prod
    auth: token
    secretRef:
      name: git-creds
    caCertSecretRef:
      name: git-ca
    proxy: https://proxy.example.com:3128
    noSSLVerify: false
  override:
    gitSyncDepth: 0
    statusMode: disabled
    reconcileTimeout: 10m
    apiServerTimeout: 30s
    enableShellInRendering: false
    namespaceStrategy: explicit
    resources:
    - containerName: reconciler
      cpuRequest: 500m
      memoryRequest: 1Gi
      cpuLimit: 1
      memoryLimit: 2Gi
    - containerName: git-sync
      memoryLimit: 400Mi
    logLevels:
    - containerName: reconciler
      logLevel: 5
    roleRefs:
    - kind: ClusterRole
      name: edit
    - kind: Role
      name: admin
      namespace: shop
`,
    );
  });

  void it("RootSync v1alpha1 with ssh auth and a null override", () => {
    assertAccepted(
      rootSyncCrd,
      `
apiVersion: configsync.gke.io/v1alpha1
kind: RootSync
metadata:
  name: root-sync
  namespace: config-management-system
spec:
  git:
    repo: git@github.com:example/config.git
    branch: master
    auth: ssh
    secretRef:
      name: git-creds
  override: null
`,
    );
  });

  void it("RootSync from OCI and from Helm (accepted even though driftless syncs git only)", () => {
    assertAccepted(
      rootSyncCrd,
      `
apiVersion: configsync.gke.io/v1beta1
kind: RootSync
metadata: {name: oci-sync, namespace: config-management-system}
spec:
  sourceType: oci
  sourceFormat: unstructured
  oci:
    image: us-docker.pkg.dev/example/repo/package:v1
    dir: .
    auth: gcpserviceaccount
    gcpServiceAccountEmail: syncer@example.iam.gserviceaccount.com
`,
    );
    assertAccepted(
      rootSyncCrd,
      `
apiVersion: configsync.gke.io/v1beta1
kind: RootSync
metadata: {name: helm-sync, namespace: config-management-system}
spec:
  sourceType: helm
  helm:
    repo: oci://us-docker.pkg.dev/example/charts
    chart: ingress
    version: 1.2.x
    releaseName: ingress
    namespace: ingress
    includeCRDs: true
    auth: none
    period: 1h
    values:
      replicaCount: 3
      image: {tag: latest}
    valuesFileRefs:
    - name: prod-values
      dataKey: values.yaml
`,
    );
  });

  void it("a Helm chart of the form <repo>/<chart> on a RootSync and a RepoSync (Config Sync refuses it on status, not at the API)", () => {
    for (const [crd, kind, namespace] of [
      [rootSyncCrd, "RootSync", "config-management-system"],
      [repoSyncCrd, "RepoSync", "shop"],
    ] as const)
      assertAccepted(
        crd,
        `
apiVersion: configsync.gke.io/v1beta1
kind: ${kind}
metadata: {name: helm-sync, namespace: ${namespace}}
spec:
  sourceType: helm
  helm: {repo: oci://us-docker.pkg.dev/example, chart: charts/ingress, auth: none}
`,
      );
  });

  void it("RepoSync with gcenode auth and overrides", () => {
    assertAccepted(
      repoSyncCrd,
      `
apiVersion: configsync.gke.io/v1beta1
kind: RepoSync
metadata:
  name: repo-sync
  namespace: bookstore
spec:
  sourceFormat: unstructured
  git:
    repo: https://source.developers.google.com/p/example/r/bookstore
    branch: main
    auth: gcenode
  override:
    reconcileTimeout: 10m
    logLevels:
    - containerName: reconciler
      logLevel: 3
`,
    );
  });

  void it("status as Config Sync writes it, including conditions with errors and error source refs", () => {
    assertAccepted(
      rootSyncCrd,
      `
apiVersion: configsync.gke.io/v1beta1
kind: RootSync
metadata: {name: root-sync, namespace: config-management-system}
spec:
  git: {repo: "https://example.com/r.git", auth: none}
status:
  observedGeneration: 4
  reconciler: root-reconciler
  lastSyncedCommit: 1a2b3c4d
  source:
    gitStatus: {repo: "https://example.com/r.git", revision: HEAD, branch: main, dir: .}
    commit: 1a2b3c4d
    lastUpdate: "2024-05-01T10:00:00Z"
  rendering:
    gitStatus: {repo: "https://example.com/r.git", revision: HEAD, branch: main, dir: .}
    commit: 1a2b3c4d
    lastUpdate: null
    message: Rendering skipped
  sync:
    gitStatus: {repo: "https://example.com/r.git", revision: HEAD, branch: main, dir: .}
    commit: 1a2b3c4d
    lastUpdate: "2024-05-01T10:00:05Z"
    errors:
    - code: "2009"
      errorMessage: "KNV2009: failed to apply Deployment.apps, shop/web"
      errorResources:
      - sourcePath: shop/web.yaml
        name: web
        namespace: shop
        gvk: {group: apps, version: v1, kind: Deployment}
    errorSummary: {totalCount: 1, errorCountAfterTruncation: 1}
  conditions:
  - type: Syncing
    status: "False"
    lastUpdateTime: "2024-05-01T10:00:05Z"
    lastTransitionTime: "2024-05-01T10:00:05Z"
    reason: Sync
    message: Sync Completed
    commit: 1a2b3c4d
    errorSourceRefs: [status.sync.errors]
    errorSummary: {totalCount: 1, errorCountAfterTruncation: 1}
  - type: ReconcilerFinalizerFailure
    status: "True"
    reason: DestroyFailure
    message: Failed to delete managed resource objects
    errors:
    - {code: "2002", errorMessage: "KNV2002: APIServer error"}
`,
    );
  });

  void it("ResourceGroup with per-object status", () => {
    assertAccepted(
      resourceGroupCrd,
      `
apiVersion: kpt.dev/v1alpha1
kind: ResourceGroup
metadata:
  name: root-sync
  namespace: config-management-system
  labels:
    cli-utils.sigs.k8s.io/inventory-id: config-management-system_root-sync
spec:
  resources:
  - {group: apps, kind: Deployment, namespace: shop, name: web}
  - {group: "", kind: Namespace, namespace: "", name: shop}
status:
  observedGeneration: 2
  resourceStatuses:
  - group: apps
    kind: Deployment
    namespace: shop
    name: web
    status: Current
    sourceHash: 1a2b3c4
    strategy: Apply
    actuation: Succeeded
    reconcile: Succeeded
  conditions:
  - {type: Reconciling, status: "False", reason: FinishReconciling, lastTransitionTime: "2024-05-01T10:00:00Z"}
  - {type: Stalled, status: "False", reason: FinishReconciling, lastTransitionTime: "2024-05-01T10:00:00Z"}
`,
    );
  });
});

void describe("the schemas still reject what Config Sync rejects", () => {
  void it("an unknown field in spec.git, an unknown auth type and a bad sourceType", () => {
    const schema = schemaOf(rootSyncCrd);
    const base = { apiVersion: "configsync.gke.io/v1beta1", kind: "RootSync", metadata: {} };
    assert.deepEqual(schemaViolations({ ...base, spec: { git: { repo: "r", auth: "none", brnach: "x" } } }, schema), [
      ".spec.git.brnach: unknown field",
    ]);
    assert.equal(schemaViolations({ ...base, spec: { git: { repo: "r", auth: "password" } } }, schema).length, 1);
    assert.equal(schemaViolations({ ...base, spec: { sourceType: "svn" } }, schema).length, 1);
    assert.equal(schemaViolations({ ...base, spec: { git: { repo: "r" } } }, schema).length, 1);
  });

  void it("RootSync-only fields on a RepoSync: helm.namespace, helm.deployNamespace, override.roleRefs and override.namespaceStrategy", () => {
    const spec = {
      sourceType: "helm",
      helm: { repo: "https://charts.example", chart: "web", auth: "none", namespace: "web", deployNamespace: "web" },
      override: { roleRefs: [{ kind: "ClusterRole", name: "view" }], namespaceStrategy: "explicit" },
    };
    assertRefused(repoSyncCrd, { kind: "RepoSync", spec }, [
      ".spec.helm.namespace: unknown field",
      ".spec.helm.deployNamespace: unknown field",
      ".spec.override.roleRefs: unknown field",
      ".spec.override.namespaceStrategy: unknown field",
    ]);
    assertAccepted(rootSyncCrd, JSON.stringify({ kind: "RootSync", spec }));
  });

  void it("a misspelt field under spec.oci, spec.helm or spec.override, on both kinds", () => {
    const spec = {
      oci: { image: "registry.example/config:v1", auth: "none", perod: "1m" },
      helm: { repo: "https://charts.example", chart: "web", auth: "none", valueFiles: [{ name: "v" }] },
      override: { reconcileTimout: "10m" },
    };
    const expected = [
      ".spec.oci.perod: unknown field",
      ".spec.helm.valueFiles: unknown field",
      ".spec.override.reconcileTimout: unknown field",
    ];
    assertRefused(rootSyncCrd, { kind: "RootSync", spec }, expected);
    assertRefused(repoSyncCrd, { kind: "RepoSync", spec }, expected);
  });

  void it("a Helm chart helm would read as a flag, which Config Sync's schema lets through (driftless's own)", () => {
    const base = { apiVersion: "configsync.gke.io/v1beta1", kind: "RootSync", metadata: {} };
    for (const chart of ["--post-renderer=/bin/sh", "-web", "/web"]) {
      const spec = { sourceType: "helm", helm: { repo: "https://charts.example", chart, auth: "none" } };
      assert.equal(schemaViolations({ ...base, spec }, schemaOf(rootSyncCrd)).length, 1, chart);
    }
  });
});

void describe("what driftless writes fits the status schema", () => {
  void it("errors, summaries and conditions built by the helpers", () => {
    const error = new DriftlessError({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      message: "boom",
      resources: [{ group: "", kind: "ConfigMap", namespace: "shop", name: "cm", sourcePath: "cm.yaml" }],
    });
    const { errors, errorSummary } = statusErrors([error]);
    const { conditions } = setCondition(
      undefined,
      { type: "Stalled", status: "True", reason: "Validation", message: "bad", errors, errorSummary },
      new Date(),
    );
    const status = {
      observedGeneration: 1,
      reconciler: "root-reconciler",
      sync: { commit: "abc", errors, errorSummary },
      conditions,
    };
    const object = { apiVersion: "configsync.gke.io/v1beta1", kind: "RootSync", metadata: {}, spec: {}, status };
    assert.deepEqual(schemaViolations(object, schemaOf(rootSyncCrd)), []);
  });
});
