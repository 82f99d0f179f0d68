/**
 * A CRD's schema changed under a reconciler that may read CRDs but not watch them: nothing tells it, so the
 * schema it read once must not be kept for good.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import {
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { limitedKubeconfig } from "../../support/limited-identity.ts";
import { adminClient, crds } from "../kube/support.ts";

/** Anvils whose spec.ports is a list keyed by name (`keyed`), or atomic. */
function anvilCrd(group: string, keyed: boolean): KubeObject {
  const ports = {
    type: "array",
    ...(keyed ? { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] } : {}),
    items: {
      type: "object",
      required: ["name"],
      properties: { name: { type: "string" }, port: { type: "integer" } },
    },
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `anvils.${group}` },
    spec: {
      group,
      names: { kind: "Anvil", plural: "anvils", singular: "anvil" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { spec: { type: "object", properties: { size: { type: "integer" }, ports } } },
            },
          },
        },
      ],
    },
  };
}

async function established(client: KubeClient, name: string): Promise<void> {
  await eventually(
    async () => {
      const live = await client.get(crds, undefined, name);
      const conditions = ((live?.["status"] as JsonObject | undefined)?.["conditions"] ?? []) as JsonObject[];
      return conditions.some((c) => c["type"] === "Established" && c["status"] === "True") || undefined;
    },
    { what: `${name} established` },
  );
}

test("a reconciler that may list CRDs but not watch them corrects a list item someone adds once the CRD makes the list atomic, where it kept the keyed schema it read before", async (t) => {
  const group = `crdschema${suffix()}.acme.com`;
  const name = `crdschema-${suffix()}`;
  const crdName = `anvils.${group}`;
  const namespace = await testNamespace(t, "crdschema");
  const client = await adminClient(t);
  t.after(async () => {
    await customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined);
    await client.delete(crds, undefined, crdName).catch(() => undefined);
  });
  const kubeconfig = await limitedKubeconfig(t, client, [
    {
      apiGroups: ["configsync.gke.io"],
      resources: ["rootsyncs", "rootsyncs/status"],
      verbs: ["get", "list", "watch", "update", "patch"],
    },
    { apiGroups: ["kpt.dev"], resources: ["resourcegroups", "resourcegroups/status"], verbs: ["*"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
    // CRDs may be read, not watched.
    { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["get", "list"] },
    { apiGroups: [group], resources: ["anvils"], verbs: ["*"] },
  ]);
  await client.create(crds, anvilCrd(group, true));
  await established(client, crdName);
  const anvils: ResourceMapping = {
    group,
    version: "v1",
    kind: "Anvil",
    resource: "anvils",
    namespaced: true,
    verbs: [],
  };
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/anvil.yaml",
    JSON.stringify({
      apiVersion: `${group}/v1`,
      kind: "Anvil",
      metadata: { name: "heavy", namespace },
      spec: { size: 1, ports: [{ name: "a", port: 1 }] },
    }),
  );
  const commit = await repo.commit("an Anvil");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { kubeconfig });
  await rootSynced(name, commit);
  const spec = async (): Promise<JsonObject> =>
    ((await client.get(anvils, namespace, "heavy"))?.["spec"] ?? {}) as JsonObject;
  // A correction matches the live Anvil: its schema (ports keyed by name) is read from the CRD.
  await client.patch(anvils, namespace, "heavy", { spec: { size: 99 } }, "merge");
  await eventually(async () => (await spec())["size"] === 1 || undefined, { what: "the size corrected" });

  const live = await client.get(crds, undefined, crdName);
  assert.ok(live !== undefined);
  await client.replace(crds, { ...live, spec: anvilCrd(group, false)["spec"] });
  // Atomic now: the declared list is the whole list, so an item someone adds is drift.
  await client.patch(
    anvils,
    namespace,
    "heavy",
    {
      spec: {
        ports: [
          { name: "a", port: 1 },
          { name: "b", port: 2 },
        ],
      },
    },
    "merge",
  );
  await eventually(async () => (((await spec())["ports"] ?? []) as JsonObject[]).length === 1 || undefined, {
    timeoutMs: 30_000,
    what: "the added port removed",
  });
});
