/**
 * The ResourceGroup status controller (Config Sync's resource-group-controller) on groups no reconciler
 * keeps, replaying Config Sync's e2e TestResourceGroupControllerInKptGroup, TestResourceGroupCustomResource
 * and TestResourceGroupApplyStatus: each step asserts the exact status Config Sync's controller writes
 * (condition times checked for their format, then left out). Those run `driftless-resource-group-controller`
 * as manifests/resource-group-controller.yaml's ServiceAccount, as a cluster runs it; the last runs it in a
 * process-mode manager, as a ServiceAccount of its own bound to the manager's roles and the controller's.
 */
import { after, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { resourceGroupMapping } from "@driftless/applier";
import type { KubeObject, ResourceMapping } from "@driftless/kube";
import { eventually, quietly, suffix, testFailed } from "../../support/index.ts";
import { widgetCrd } from "../../support/crds.ts";
import { scrape, valueOf } from "../monitoring/scrape.ts";
import {
  admin,
  applyManifest,
  createNamespace,
  managerKubeconfig,
  Mapping,
  serviceAccountKubeconfig,
  startManager,
  systemNamespace,
} from "./helpers.ts";

const Crd = Mapping.CustomResourceDefinition;
const ServiceAccount = Mapping.ServiceAccount;
const ClusterRoleBinding = Mapping.ClusterRoleBinding;
const RoleBinding = Mapping.RoleBinding;

const notOwned =
  "This object is not owned by any inventory object. The status for the current object may not reflect the specification for it in current ResourceGroup.";
const finish = { reason: "FinishReconciling", message: "finish reconciling" };
/** testresourcegroup.EmptyStatus(): Reconciling (always False) and Stalled False. */
const emptyConditions = [
  { type: "Reconciling", status: "False", ...finish },
  { type: "Stalled", status: "False", ...finish },
];

/** A kubeconfig of a ServiceAccount bound to the manager's roles and the ResourceGroup controller's. */
async function statusControllerKubeconfig(): Promise<string> {
  await managerKubeconfig(); // applies the manager's manifests
  await applyManifest("resource-group-controller.yaml", { skipKinds: ["Deployment"] });
  const client = await admin();
  const name = `rg-status-${suffix()}`;
  await client.create(ServiceAccount, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name, namespace: systemNamespace },
  });
  const subjects = [{ kind: "ServiceAccount", name, namespace: systemNamespace }];
  const clusterRoles = ["driftless:reconciler-manager", "driftless:resource-group-controller"];
  for (const role of clusterRoles)
    await client.create(ClusterRoleBinding, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${name}-${role.split(":")[1]}` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects,
    });
  const roles = ["driftless:reconciler-manager", "driftless:reconciler-manager-process"];
  for (const role of roles)
    await client.create(RoleBinding, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: `${name}-${role.split(":")[1]}`, namespace: systemNamespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
      subjects,
    });
  after(async () => {
    for (const role of clusterRoles)
      await client.delete(ClusterRoleBinding, undefined, `${name}-${role.split(":")[1]}`);
    for (const role of roles) await client.delete(RoleBinding, systemNamespace, `${name}-${role.split(":")[1]}`);
    await client.delete(ServiceAccount, systemNamespace, name);
  });
  return serviceAccountKubeconfig(name);
}

// Made at the file's top level: node:test's after() called inside a test would tie the clean-up to that test.
const kubeconfig = await statusControllerKubeconfig();

/** A manager of the test's own with the controller on (a test manager serves a selector, where it is off by default). */
async function managerWithStatusController(t: TestContext): Promise<void> {
  const manager = await startManager(t, {
    extraArgs: ["--kubeconfig", kubeconfig, "--resource-group-controller", "true"],
  });
  await eventually(() => manager.isLeader(), { what: "the manager leads" });
}

const standaloneKubeconfig = await serviceAccountKubeconfig("resource-group-controller", "resource-group-system");
const standaloneMain = fileURLToPath(
  new URL("../../../apps/manager/src/resource-group-controller.ts", import.meta.url),
);

/**
 * `driftless-resource-group-controller` as its manifest's ServiceAccount, until it leads; stopped after the
 * test. Returns the URL of its /metrics, /healthz and /readyz.
 */
async function statusController(t: TestContext): Promise<string> {
  const args = [
    standaloneMain,
    "--kubeconfig",
    standaloneKubeconfig,
    "--lease-name",
    `rg-status-${suffix()}`,
    "--metrics-port",
    "0",
  ];
  const child = spawn(process.execPath, [...args, "--log-level", "debug"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, KUBECONFIG: "", POD_NAMESPACE: "resource-group-system" },
  });
  const logs: string[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => logs.push(chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => logs.push(`stderr: ${chunk}`));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  t.after(async () => {
    child.kill("SIGTERM");
    // One stuck in its shutdown is killed: a hook that never ends skips the test's later clean-up too.
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(killer);
    if (testFailed(t) || process.env["DRIFTLESS_TEST_LOGS"] === "1")
      process.stderr.write(`--- resource-group-controller ---\n${logs.join("")}\n`);
  });
  await eventually(() => logs.join("").includes('"msg":"became the leader"'), {
    what: "the resource-group-controller leads",
  }).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${logs.join("")}`);
  });
  const port = /"msg":"resource-group-controller started".*?"metricsPort":(\d+)/.exec(logs.join(""))?.[1];
  assert.ok(port !== undefined, `no metrics port in its log:\n${logs.join("")}`);
  return `http://127.0.0.1:${port}`;
}

/** The value of the sample of `name` whose labels include every pair of `labels`, scraped now. */
async function sampleOf(url: string, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  return valueOf(await scrape(`${url}/metrics`), name, labels);
}

const configSyncLabel = { "app.kubernetes.io/managed-by": "configmanagement.gke.io" };

/** testresourcegroup.New: the inventory-id and managed-by labels (`labels` replaces the managed-by one). */
async function createGroup(
  namespace: string,
  name: string,
  labels: Record<string, string> = configSyncLabel,
): Promise<KubeObject> {
  const client = await admin();
  return client.create(resourceGroupMapping, {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name, namespace, labels: { "cli-utils.sigs.k8s.io/inventory-id": name, ...labels } },
  });
}

/** Sets the spec (when given), then status.observedGeneration to the new generation, as an applier does. */
async function applyGroup(namespace: string, name: string, spec?: Record<string, unknown>): Promise<void> {
  const client = await admin();
  let group = (await client.get(resourceGroupMapping, namespace, name)) as KubeObject;
  if (spec !== undefined) group = await client.replace(resourceGroupMapping, { ...group, spec });
  const status = {
    ...((group["status"] as Record<string, unknown> | undefined) ?? {}),
    observedGeneration: group.metadata.generation,
  };
  await client.replaceStatus(resourceGroupMapping, { ...group, status });
}

/** The group's status with every lastTransitionTime checked (RFC 3339, whole seconds) and removed. */
async function statusOf(namespace: string, name: string): Promise<unknown> {
  const group = await (await admin()).get(resourceGroupMapping, namespace, name);
  return JSON.parse(JSON.stringify(group?.["status"] ?? null), (key, value: unknown) => {
    if (key !== "lastTransitionTime") return value;
    assert.match(String(value), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    return undefined;
  }) as unknown;
}

async function expectStatus(namespace: string, name: string, expected: unknown, what: string): Promise<void> {
  let last: unknown;
  const equal = async (): Promise<boolean> => {
    last = await statusOf(namespace, name);
    return isDeepStrictEqual(last, expected);
  };
  // On a timeout, the last status against the expected one, as a diff.
  await eventually(equal, { what }).catch(() => assert.deepEqual(last, expected, what));
}

/** testresourcegroup.CreateOrUpdateResources: a ConfigMap with owning-inventory `id` and token 1234567890. */
async function applyConfigMap(namespace: string, name: string, id: string): Promise<void> {
  const client = await admin();
  const annotations = { "config.k8s.io/owning-inventory": id, "configmanagement.gke.io/token": "1234567890" };
  await client.patch(
    Mapping.ConfigMap,
    namespace,
    name,
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, annotations } },
    "apply",
    {
      fieldManager: "driftless-tests",
      force: true,
    },
  );
}

const configMapEntry = (namespace: string, name: string) => ({ namespace, name, group: "", kind: "ConfigMap" });

test("a user's ResourceGroup gets Config Sync's status: empty, NotFound, a subgroup, Current with sourceHash, then the Overlap condition once another inventory owns the object (TestResourceGroupControllerInKptGroup)", async (t) => {
  await statusController(t);
  const namespace = await createNamespace(t, "rg");
  await createGroup(namespace, "group-a");
  await applyGroup(namespace, "group-a");
  await expectStatus(namespace, "group-a", { observedGeneration: 1, conditions: emptyConditions }, "the empty status");

  const example = configMapEntry(namespace, "example");
  await applyGroup(namespace, "group-a", { resources: [example] });
  const notFound = { ...example, status: "NotFound" };
  await expectStatus(
    namespace,
    "group-a",
    { observedGeneration: 2, resourceStatuses: [notFound], conditions: emptyConditions },
    "NotFound",
  );

  await createGroup(namespace, "group-b");
  await applyGroup(namespace, "group-a", { resources: [example], subgroups: [{ namespace, name: "group-b" }] });
  const subgroup = {
    namespace,
    name: "group-b",
    status: "Current",
    conditions: [{ type: "OwnershipOverlap", status: "Unknown", reason: "Unknown", message: notOwned }],
  };
  const base = { observedGeneration: 3, subgroupStatuses: [subgroup], conditions: emptyConditions };
  await expectStatus(namespace, "group-a", { ...base, resourceStatuses: [notFound] }, "the subgroup");

  await applyConfigMap(namespace, "example", "group-a");
  const current = { ...example, status: "Current", sourceHash: "1234567" };
  await expectStatus(namespace, "group-a", { ...base, resourceStatuses: [current] }, "Current");

  await applyConfigMap(namespace, "example", "another");
  const overlap = {
    type: "OwnershipOverlap",
    status: "True",
    reason: "Overlap",
    message:
      "This resource is owned by another ResourceGroup another. The status only reflects the specification for the current object in ResourceGroup another.",
  };
  await expectStatus(
    namespace,
    "group-a",
    { ...base, resourceStatuses: [{ ...current, conditions: [overlap] }] },
    "Overlap",
  );
});

/** The Anvil CRD of `group` (the shared test CRD, named Anvil), deleted after the test. */
async function createAnvilCrd(t: TestContext, group: string): Promise<void> {
  const client = await admin();
  await client.create(Crd, widgetCrd(group, "Anvil") as unknown as KubeObject);
  t.after(() => quietly(`deleting CRD anvils.${group}`, () => client.delete(Crd, undefined, `anvils.${group}`)));
}

/** The Anvil `example`, once its CRD is served. */
async function createAnvil(group: string, namespace: string): Promise<void> {
  const client = await admin();
  const anvils: ResourceMapping = {
    group,
    version: "v1",
    kind: "Anvil",
    resource: "anvils",
    namespaced: true,
    verbs: [],
  };
  await eventually(
    async () =>
      client
        .create(anvils, {
          apiVersion: `${group}/v1`,
          kind: "Anvil",
          metadata: { name: "example", namespace },
          spec: { size: 10 },
        })
        .then(() => true),
    { what: "the Anvil created once its CRD is served" },
  );
}

/** An unowned Anvil's entry: Current, ownership Unknown. */
const anvilCurrent = (anvil: Record<string, string>) => ({
  ...anvil,
  status: "Current",
  conditions: [{ type: "OwnershipOverlap", status: "Unknown", reason: "Unknown", message: notOwned }],
});

test("a custom resource reads NotFound without its CRD, Current once created, NotFound again once the CRD is deleted (TestResourceGroupCustomResource)", async (t) => {
  await statusController(t);
  const namespace = await createNamespace(t, "rg");
  const group = `rg${suffix()}.test`;
  await createGroup(namespace, "group-d");
  await applyGroup(namespace, "group-d");
  const anvil = { namespace, name: "example", group, kind: "Anvil" };
  await applyGroup(namespace, "group-d", { resources: [anvil] });
  await expectStatus(
    namespace,
    "group-d",
    { observedGeneration: 2, resourceStatuses: [{ ...anvil, status: "NotFound" }], conditions: emptyConditions },
    "NotFound without the CRD",
  );

  await createAnvilCrd(t, group);
  await createAnvil(group, namespace);
  await expectStatus(
    namespace,
    "group-d",
    { observedGeneration: 2, resourceStatuses: [anvilCurrent(anvil)], conditions: emptyConditions },
    "Current",
  );

  const client = await admin();
  await client.delete(Crd, undefined, `anvils.${group}`);
  await expectStatus(
    namespace,
    "group-d",
    { observedGeneration: 2, resourceStatuses: [{ ...anvil, status: "NotFound" }], conditions: emptyConditions },
    "NotFound once the CRD is gone",
  );
});

test("a custom resource listed again after its CRD came while no group listed it reads Current, not the NotFound of its first listing", async (t) => {
  await statusController(t);
  const namespace = await createNamespace(t, "rg");
  const group = `rg${suffix()}.test`;
  await createGroup(namespace, "group-g");
  await applyGroup(namespace, "group-g");
  const anvil = { namespace, name: "example", group, kind: "Anvil" };
  await applyGroup(namespace, "group-g", { resources: [anvil] });
  await expectStatus(
    namespace,
    "group-g",
    { observedGeneration: 2, resourceStatuses: [{ ...anvil, status: "NotFound" }], conditions: emptyConditions },
    "NotFound without the CRD",
  );
  // No group lists Anvil while its CRD and an Anvil are created.
  await applyGroup(namespace, "group-g", {});
  await expectStatus(namespace, "group-g", { observedGeneration: 3, conditions: emptyConditions }, "nothing listed");
  await createAnvilCrd(t, group);
  await createAnvil(group, namespace);

  await applyGroup(namespace, "group-g", { resources: [anvil] });
  await expectStatus(
    namespace,
    "group-g",
    { observedGeneration: 4, resourceStatuses: [anvilCurrent(anvil)], conditions: emptyConditions },
    "Current once listed again",
  );
});

test("seven ConfigMaps, six applied, read Current and NotFound, a cleared status is written again, and a Deployment with no node stays InProgress (TestResourceGroupApplyStatus); its metrics count them, and drop the group's series once it is deleted", async (t) => {
  const url = await statusController(t);
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  assert.equal((await fetch(`${url}/readyz`)).status, 200);
  const namespace = await createNamespace(t, "rg");
  await createGroup(namespace, "group-e");
  await applyGroup(namespace, "group-e");
  await expectStatus(namespace, "group-e", { observedGeneration: 1, conditions: emptyConditions }, "the empty status");
  const entries = Array.from({ length: 7 }, (_, i) => configMapEntry(namespace, `test-status-${i}`));
  for (const entry of entries.slice(0, 6)) await applyConfigMap(namespace, entry.name, "group-e");
  await applyGroup(namespace, "group-e", { resources: entries });
  const statuses = entries.map((e, i) =>
    i < 6 ? { ...e, status: "Current", sourceHash: "1234567" } : { ...e, status: "NotFound" },
  );
  const expected = { observedGeneration: 2, resourceStatuses: statuses, conditions: emptyConditions };
  await expectStatus(namespace, "group-e", expected, "six Current, one NotFound");

  const client = await admin();
  const group = (await client.get(resourceGroupMapping, namespace, "group-e")) as KubeObject;
  const { resourceStatuses: _cleared, ...rest } = group["status"] as Record<string, unknown>;
  await client.replaceStatus(resourceGroupMapping, { ...group, status: rest });
  await expectStatus(namespace, "group-e", expected, "the cleared statuses written again");

  await client.create(Mapping.Deployment, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace, annotations: { "config.k8s.io/owning-inventory": "group-e" } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "web", image: "registry.invalid/web:1" }] },
      },
    },
  });
  const web = { namespace, name: "web", group: "apps", kind: "Deployment" };
  await applyGroup(namespace, "group-e", { resources: [...entries, web] });
  await expectStatus(
    namespace,
    "group-e",
    {
      observedGeneration: 3,
      resourceStatuses: [...statuses, { ...web, status: "InProgress" }],
      conditions: emptyConditions,
    },
    "the Deployment InProgress",
  );

  // Config Sync's resource-group-controller metrics, per group: 8 objects, 6 Current, one namespace.
  const resourcegroup = `${namespace}/group-e`;
  await eventually(async () => (await sampleOf(url, "config_sync_resource_count", { resourcegroup })) === 8, {
    what: "resource_count of the group",
  });
  assert.equal(await sampleOf(url, "config_sync_ready_resource_count", { resourcegroup }), 6);
  assert.equal(await sampleOf(url, "config_sync_resource_ns_count", { resourcegroup }), 1);
  assert.equal(await sampleOf(url, "config_sync_cluster_scoped_resource_count", { resourcegroup }), 0);
  assert.equal(await sampleOf(url, "driftless_resource_status_count", { resourcegroup, status: "NotFound" }), 1);
  assert.ok(((await sampleOf(url, "config_sync_resource_group_total")) ?? 0) >= 1);
  assert.ok(
    ((await sampleOf(url, "config_sync_rg_reconcile_duration_seconds_count", { stallreason: "FinishReconciling" })) ??
      0) >= 1,
  );
  await client.delete(resourceGroupMapping, namespace, "group-e");
  await eventually(async () => (await sampleOf(url, "config_sync_resource_count", { resourcegroup })) === undefined, {
    what: "the deleted group's series dropped",
  });
});

test("a reconciler's own ResourceGroup (labelled with its sync) is left to the reconciler, and one without Config Sync's managed-by label to kpt, while a user's group listing the same object is computed", async (t) => {
  await managerWithStatusController(t);
  const namespace = await createNamespace(t, "rg");
  const client = await admin();
  const example = configMapEntry(namespace, "shared");
  await applyConfigMap(namespace, "shared", "other");
  const own = await createGroup(namespace, "repo-sync", {
    ...configSyncLabel,
    "configsync.gke.io/sync-kind": "RepoSync",
    "configsync.gke.io/sync-name": "repo-sync",
    "configsync.gke.io/sync-namespace": namespace,
  });
  const updated = await client.replace(resourceGroupMapping, { ...own, spec: { resources: [example] } });
  const reconcilerStatus = {
    observedGeneration: 2,
    resourceStatuses: [
      { ...example, status: "InProgress", strategy: "Apply", actuation: "Pending", reconcile: "Pending" },
    ],
  };
  await client.replaceStatus(resourceGroupMapping, { ...updated, status: reconcilerStatus });

  // A group without Config Sync's managed-by label (`kpt live apply`'s) is kpt's to report.
  await createGroup(namespace, "kpt-group", {});
  await applyGroup(namespace, "kpt-group", { resources: [example] });
  await createGroup(namespace, "user-group");
  await applyGroup(namespace, "user-group", { resources: [example] });
  await expectStatus(
    namespace,
    "user-group",
    {
      observedGeneration: 2,
      resourceStatuses: [
        {
          ...example,
          status: "Current",
          sourceHash: "1234567",
          conditions: [
            {
              type: "OwnershipOverlap",
              status: "True",
              reason: "Overlap",
              message:
                "This resource is owned by another ResourceGroup other. The status only reflects the specification for the current object in ResourceGroup other.",
            },
          ],
        },
      ],
      conditions: emptyConditions,
    },
    "the user's group computed",
  );
  assert.deepEqual(await statusOf(namespace, "repo-sync"), reconcilerStatus);
  assert.deepEqual(await statusOf(namespace, "kpt-group"), { observedGeneration: 2 });
});
