/**
 * What a sync shows when the API server refuses some of a commit's writes: a quota with no room, an admission
 * policy. The rest of the commit applies, each refusal is KNV2009 naming the object and the server's reason,
 * and the refused object is applied without a new commit once the server takes it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  syncErrorsAt,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { denyByPolicy } from "../../support/admission-policy.ts";
import { admin, Mapping } from "../manager/helpers.ts";

const configMap = (namespace: string, name: string): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { name } });

async function resourceGroup(name: string): Promise<{ resources: string[]; statuses: string[] }> {
  const group = (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
  const names = (entries: unknown): string[] => ((entries ?? []) as JsonObject[]).map((e) => String(e["name"])).sort();
  return {
    resources: names((group["spec"] as JsonObject | undefined)?.["resources"]),
    statuses: names((group["status"] as JsonObject | undefined)?.["resourceStatuses"]),
  };
}

/** Waits until the API server enforces a new policy: a dry-run create of the denied name is refused. */
async function enforced(namespace: string, name: string): Promise<void> {
  const client = await admin();
  await eventually(
    () =>
      client
        .create(
          Mapping.ConfigMap,
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace } },
          { dryRun: true },
        )
        .then(
          () => false,
          () => true,
        ),
    { what: "the admission policy enforced" },
  );
}

test("a new object an admission policy refuses is KNV2009 and left out of the ResourceGroup, as Config Sync's inventory drops a failed new apply; the rest applies, and it is created and recorded once the policy goes, without a new commit", async (t) => {
  const namespace = await testNamespace(t, "refused-new");
  const name = `refused-new-${suffix()}`;
  const policy = `deny-${suffix()}`;
  const lift = await denyByPolicy(t, policy, {
    rule: { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] },
    when: `object.metadata.name == "denied" && object.metadata.namespace == "${namespace}"`,
    message: "ConfigMaps named denied are not allowed here",
  });
  await enforced(namespace, "denied");
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap(namespace, "a"));
  await repo.write("config/denied.yaml", configMap(namespace, "denied"));
  const commit = await repo.commit("one allowed, one denied");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  const errors = await syncErrorsAt(name, commit);
  assert.deepEqual(
    errors.map((e) => e["errorMessage"]),
    [
      `KNV2009: failed to apply ConfigMap, ${namespace}/denied: configmaps "denied" is forbidden: ValidatingAdmissionPolicy '${policy}' with binding '${policy}' denied request: ConfigMaps named denied are not allowed here\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`,
    ],
  );
  assert.ok((await coreApi().readNamespacedConfigMap({ namespace, name: "a" })).metadata?.uid);
  // Between passes only what was applied is recorded; each retry's pass first records old ∪ new for a while.
  await eventually(
    async () => {
      const group = await resourceGroup(name);
      return group.resources.join() === "a" && group.statuses.join() === "a" ? true : undefined;
    },
    { what: "a ResourceGroup holding a alone, spec and status" },
  );

  await lift();
  await rootSynced(name, commit);
  assert.ok((await coreApi().readNamespacedConfigMap({ namespace, name: "denied" })).metadata?.uid);
  assert.deepEqual(await resourceGroup(name), { resources: ["a", "denied"], statuses: ["a", "denied"] });
});
