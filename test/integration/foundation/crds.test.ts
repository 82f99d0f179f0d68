import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiextensionsV1Api } from "@kubernetes/client-node";
import {
  coreApi,
  customApi,
  expectStatus,
  kubeConfig,
  statusCode,
  suffix,
  testNamespace,
  yamlFixture,
  type JsonObject,
} from "../../support/index.ts";

const rootNamespace = "config-management-system";

async function ensureRootNamespace(): Promise<void> {
  try {
    await coreApi().createNamespace({ body: { metadata: { name: rootNamespace } } });
  } catch (error) {
    if (statusCode(error) !== 409) throw error;
  }
}

/** Every leaf of `sent` must come back unchanged: the structural schema pruned nothing a Config Sync user wrote. */
function assertPreserved(sent: unknown, got: unknown, path = "spec"): void {
  if (sent !== null && typeof sent === "object") {
    assert.ok(got !== null && typeof got === "object", `${path} came back as ${JSON.stringify(got)}`);
    for (const [key, value] of Object.entries(sent)) {
      assertPreserved(value, (got as Record<string, unknown>)[key], `${path}.${key}`);
    }
    return;
  }
  assert.deepEqual(got, sent, `${path} was changed or pruned by the apiserver`);
}

function metadataOf(obj: JsonObject): { name: string; namespace: string } {
  return obj["metadata"] as { name: string; namespace: string };
}

test("serves RootSync, RepoSync and ResourceGroup CRDs, Established, with a status subresource", async () => {
  const api = kubeConfig().makeApiClient(ApiextensionsV1Api);
  for (const name of ["rootsyncs.configsync.gke.io", "reposyncs.configsync.gke.io", "resourcegroups.kpt.dev"]) {
    const crd = await api.readCustomResourceDefinition({ name });
    const established = crd.status?.conditions?.find((c) => c.type === "Established");
    assert.equal(established?.status, "True", `${name} is not Established`);
    for (const version of crd.spec.versions.filter((v) => v.served)) {
      assert.ok(version.subresources?.status !== undefined, `${name} ${version.name} has no status subresource`);
      assert.ok((version.additionalPrinterColumns ?? []).length > 0, `${name} ${version.name} has no printer columns`);
    }
  }
});

for (const fixture of ["rootsync-unstructured.yaml", "rootsync-hierarchy-ssh.yaml"]) {
  test(`accepts Config Sync's RootSync YAML unchanged (${fixture}) and round-trips its spec`, async () => {
    await ensureRootNamespace();
    const body = yamlFixture(`configsync-docs/${fixture}`);
    const meta = metadataOf(body);
    meta.name = `${meta.name}-${suffix()}`;
    const custom = customApi();
    const ref = { group: "configsync.gke.io", version: "v1beta1", namespace: rootNamespace, plural: "rootsyncs" };
    await custom.createNamespacedCustomObject({ ...ref, body });
    try {
      const got = (await custom.getNamespacedCustomObject({ ...ref, name: meta.name })) as JsonObject;
      assertPreserved(body["spec"], got["spec"]);
      assertPreserved(
        (body["metadata"] as JsonObject)["annotations"] ?? {},
        (got["metadata"] as JsonObject)["annotations"] ?? {},
        "metadata.annotations",
      );
    } finally {
      await custom.deleteNamespacedCustomObject({ ...ref, name: meta.name });
    }
  });
}

for (const [fixture, version] of [
  ["reposync-token.yaml", "v1beta1"],
  ["reposync-v1alpha1.yaml", "v1alpha1"],
] as const) {
  test(`accepts Config Sync's RepoSync YAML unchanged (${fixture}) and round-trips its spec`, async (t) => {
    const namespace = await testNamespace(t);
    const body = yamlFixture(`configsync-docs/${fixture}`, { NAMESPACE: namespace });
    const custom = customApi();
    const ref = { group: "configsync.gke.io", version, namespace, plural: "reposyncs" };
    await custom.createNamespacedCustomObject({ ...ref, body });
    const got = (await custom.getNamespacedCustomObject({ ...ref, name: metadataOf(body).name })) as JsonObject;
    assertPreserved(body["spec"], got["spec"]);
  });
}

test("rejects a RepoSync whose fields have the wrong type (the schema is structural, not a free-for-all)", async (t) => {
  const namespace = await testNamespace(t);
  const body = yamlFixture("configsync-docs/reposync-token.yaml", { NAMESPACE: namespace });
  ((body["spec"] as JsonObject)["git"] as JsonObject)["noSSLVerify"] = "definitely";
  await expectStatus(422, () =>
    customApi().createNamespacedCustomObject({
      group: "configsync.gke.io",
      version: "v1beta1",
      namespace,
      plural: "reposyncs",
      body,
    }),
  );
});

test("updates status through the status subresource without touching spec, and ignores status on the main resource", async (t) => {
  const namespace = await testNamespace(t);
  const body = yamlFixture("configsync-docs/reposync-token.yaml", { NAMESPACE: namespace });
  const custom = customApi();
  const ref = { group: "configsync.gke.io", version: "v1beta1", namespace, plural: "reposyncs", name: "repo-sync" };
  const created = (await custom.createNamespacedCustomObject({ ...ref, body })) as JsonObject;

  const status = {
    observedGeneration: 1,
    reconciler: `ns-reconciler-${namespace}`,
    lastSyncedCommit: "0123456789abcdef0123456789abcdef01234567",
    sync: {
      commit: "0123456789abcdef0123456789abcdef01234567",
      lastUpdate: "2026-11-22T10:00:00Z",
      gitStatus: { repo: "https://git.example.com/team/app-config.git", revision: "HEAD", branch: "main", dir: "/" },
      errors: [
        {
          code: "2009",
          errorMessage: "KNV2009: apply failed",
          errorResources: [
            { sourcePath: "cm.yaml", name: "a", namespace, gvk: { group: "", version: "v1", kind: "ConfigMap" } },
          ],
        },
      ],
      errorSummary: { totalCount: 1, truncated: false, errorCountAfterTruncation: 1 },
    },
    conditions: [
      {
        type: "Syncing",
        status: "False",
        reason: "Sync",
        message: "Sync Completed",
        commit: "0123456789abcdef0123456789abcdef01234567",
        lastUpdateTime: "2026-11-22T10:00:00Z",
        lastTransitionTime: "2026-11-22T10:00:00Z",
      },
    ],
  };
  const withStatus = { ...created, status };
  const updated = (await custom.replaceNamespacedCustomObjectStatus({ ...ref, body: withStatus })) as JsonObject;
  assert.deepEqual(updated["spec"], created["spec"], "a status write changed spec");
  assert.equal(
    (updated["metadata"] as JsonObject)["generation"],
    (created["metadata"] as JsonObject)["generation"],
    "a status write bumped generation",
  );
  assertPreserved(status, updated["status"], "status");

  // A write to the main resource must not be able to change status (the subresource owns it).
  const changedSpec = structuredClone(updated);
  ((changedSpec["spec"] as JsonObject)["git"] as JsonObject)["branch"] = "release";
  (changedSpec["status"] as JsonObject)["lastSyncedCommit"] = "ffffffffffffffffffffffffffffffffffffffff";
  const afterSpecWrite = (await custom.replaceNamespacedCustomObject({ ...ref, body: changedSpec })) as JsonObject;
  assert.equal(((afterSpecWrite["spec"] as JsonObject)["git"] as JsonObject)["branch"], "release");
  assert.equal(
    (afterSpecWrite["status"] as JsonObject)["lastSyncedCommit"],
    status.lastSyncedCommit,
    "the main resource changed status",
  );
});

test("stores a ResourceGroup inventory and its resourceStatuses", async (t) => {
  const namespace = await testNamespace(t);
  const body = yamlFixture("configsync-docs/resourcegroup.yaml", { NAMESPACE: namespace });
  const custom = customApi();
  const ref = { group: "kpt.dev", version: "v1alpha1", namespace, plural: "resourcegroups", name: "repo-sync" };
  const created = (await custom.createNamespacedCustomObject({ ...ref, body })) as JsonObject;
  assertPreserved(body["spec"], created["spec"]);
  const status = {
    observedGeneration: 1,
    resourceStatuses: [
      {
        group: "",
        kind: "ConfigMap",
        namespace,
        name: "app-settings",
        status: "Current",
        sourceHash: "1a2b3c4d",
        strategy: "Apply",
        actuation: "Succeeded",
        reconcile: "Succeeded",
      },
      {
        group: "apps",
        kind: "Deployment",
        namespace,
        name: "web",
        status: "InProgress",
        sourceHash: "5e6f7a8b",
        strategy: "Apply",
        actuation: "Succeeded",
        reconcile: "Pending",
        conditions: [
          {
            type: "Stalled",
            status: "False",
            lastTransitionTime: "2026-11-22T10:00:00Z",
            reason: "Progressing",
            message: "waiting",
          },
        ],
      },
    ],
  };
  const updated = (await custom.replaceNamespacedCustomObjectStatus({
    ...ref,
    body: { ...created, status },
  })) as JsonObject;
  assertPreserved(status, updated["status"], "status");
});
