/**
 * What a sync shows when the API server refuses some of a commit's writes: a quota with no room, an admission
 * policy. The rest of the commit applies, each refusal is KNV2009 naming the object and the server's reason,
 * and the refused object is applied without a new commit once the server takes it.
 */
import { test, type TestContext } from "node:test";
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
import type { KubeObject } from "@driftless/kube";

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

/** Waits until the API server enforces a new policy: a dry-run create of `object` is refused. */
async function enforced(mapping: (typeof Mapping)[keyof typeof Mapping], object: KubeObject): Promise<void> {
  const client = await admin();
  await eventually(
    () =>
      client.create(mapping, object, { dryRun: true }).then(
        () => false,
        () => true,
      ),
    { what: "the admission policy enforced" },
  );
}

/** An admission policy refusing ConfigMap `denied` in `namespace`, in force when this returns, and its lifting. */
async function denyConfigMapsNamedDenied(
  t: TestContext,
  namespace: string,
): Promise<{ policy: string; lift: () => Promise<void> }> {
  const policy = `deny-${suffix()}`;
  const lift = await denyByPolicy(t, policy, {
    rule: { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] },
    when: `object.metadata.name == "denied" && object.metadata.namespace == "${namespace}"`,
    message: "ConfigMaps named denied are not allowed here",
  });
  await enforced(Mapping.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "denied", namespace } });
  return { policy, lift };
}

test("a new object an admission policy refuses is KNV2009 and left out of the ResourceGroup, as Config Sync's inventory drops a failed new apply; the rest applies, and it is created and recorded once the policy goes, without a new commit", async (t) => {
  const namespace = await testNamespace(t, "refused-new");
  const name = `refused-new-${suffix()}`;
  const { policy, lift } = await denyConfigMapsNamedDenied(t, namespace);
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
      `KNV2009: failed to apply ConfigMap, ${namespace}/denied: configmaps "denied" is forbidden: ValidatingAdmissionPolicy '${policy}' with binding '${policy}' denied request: ConfigMaps named denied are not allowed here\n\nsource: config/denied.yaml\nnamespace: ${namespace}\nmetadata.name: denied\ngroup:\nversion: v1\nkind: ConfigMap\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`,
    ],
  );
  assert.ok((await coreApi().readNamespacedConfigMap({ namespace, name: "a" })).metadata?.uid);
  // The failing pass wrote its inventory before its status; its retries leave the refused object out from the start.
  assert.deepEqual(await resourceGroup(name), { resources: ["a"], statuses: ["a"] });

  await lift();
  await rootSynced(name, commit);
  assert.ok((await coreApi().readNamespacedConfigMap({ namespace, name: "denied" })).metadata?.uid);
  assert.deepEqual(await resourceGroup(name), { resources: ["a", "denied"], statuses: ["a", "denied"] });
});

test("a refused object accepted on a retry is recorded right after its write, before the pass waits for it to become Current (a crash then forgets nothing)", async (t) => {
  const namespace = await testNamespace(t, "refused-then-taken");
  const name = `refused-taken-${suffix()}`;
  const policy = `deny-${suffix()}`;
  const lift = await denyByPolicy(t, policy, {
    rule: { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
    when: `object.metadata.namespace == "${namespace}"`,
    message: "no Deployments yet",
  });
  // Never available here (no kubelet): the pass that creates it waits its reconcileTimeout for it.
  const web = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "web:1" }] } },
    },
  };
  await enforced(Mapping.Deployment, web);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap(namespace, "a"));
  await repo.write("config/web.yaml", JSON.stringify(web));
  const commit = await repo.commit("a ConfigMap and a Deployment the policy refuses for now");
  await createRootSync(name, repo, { spec: { override: { reconcileTimeout: "10m" } } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await syncErrorsAt(name, commit);
  assert.deepEqual((await resourceGroup(name)).resources, ["a"]);

  await lift();
  // Created by a retry whose wait for it lasts 10 minutes: the ResourceGroup holds it long before that pass ends.
  await eventually(
    async () => {
      return (await resourceGroup(name)).resources.includes("web") ? true : undefined;
    },
    { timeoutMs: 60_000, what: "the accepted Deployment recorded while its pass waits for it" },
  );
});

test("objects depending on a refused one are skipped in cli-utils' words, as Config Sync's applier reports them: the first 'actuation failed', the next along the chain 'actuation skipped', each naming its dependency by its cli-utils key; all are applied once the policy goes", async (t) => {
  const namespace = await testNamespace(t, "refused-chain");
  const name = `refused-chain-${suffix()}`;
  const { policy, lift } = await denyConfigMapsNamedDenied(t, namespace);
  const dependent = (cm: string, on: string): string =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: cm,
        namespace,
        annotations: { "config.kubernetes.io/depends-on": `/namespaces/${namespace}/ConfigMap/${on}` },
      },
    });
  const repo = await TestRepo.create(t);
  await repo.write("config/denied.yaml", configMap(namespace, "denied"));
  await repo.write("config/b.yaml", dependent("b", "denied"));
  await repo.write("config/c.yaml", dependent("c", "b"));
  const commit = await repo.commit("c depends on b, which depends on a refused ConfigMap");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  const link = "\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009";
  const errors = await syncErrorsAt(name, commit);
  assert.deepEqual(errors.map((e) => e["errorMessage"]).sort(), [
    `KNV2009: failed to apply ConfigMap, ${namespace}/denied: configmaps "denied" is forbidden: ValidatingAdmissionPolicy '${policy}' with binding '${policy}' denied request: ConfigMaps named denied are not allowed here\n\nsource: config/denied.yaml\nnamespace: ${namespace}\nmetadata.name: denied\ngroup:\nversion: v1\nkind: ConfigMap${link}`,
    `KNV2009: skipped apply of ConfigMap, ${namespace}/b: dependency apply actuation failed: ${namespace}_denied__ConfigMap${link}`,
    `KNV2009: skipped apply of ConfigMap, ${namespace}/c: dependency apply actuation skipped: ${namespace}_b__ConfigMap${link}`,
  ]);

  await lift();
  await rootSynced(name, commit);
  for (const cm of ["denied", "b", "c"])
    assert.ok((await coreApi().readNamespacedConfigMap({ namespace, name: cm })).metadata?.uid, `${cm} not created`);
});
