/**
 * A CRD's schema changed under objects a pass found as declared: that finding was made with the old schema.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import { createLogger } from "@driftless/sync";
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

test("a resync after a CRD makes a keyed list atomic removes the item someone added, where the match found equal under the keyed schema was kept while the object did not change", async (t) => {
  const group = `crdverify${suffix()}.acme.com`;
  const name = `crdverify-${suffix()}`;
  const crdName = `anvils.${group}`;
  const namespace = await testNamespace(t, "crdverify");
  const client = await adminClient(t);
  t.after(async () => {
    await customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined);
    await client.delete(crds, undefined, crdName).catch(() => undefined);
  });
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
  // Every poll is a full pass (a resync): it matches the Anvil, or finds it verified.
  const lines: string[] = [];
  await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    {
      resyncPeriodMs: 1_000,
      log: createLogger({ test: t.name }, { level: "info", write: (line) => void lines.push(line) }),
    },
  );
  const passesSoFar = (): number => lines.filter((line) => line.includes('"msg":"pass finished"')).length;
  await rootSynced(name, commit);
  const ports = async (): Promise<JsonObject[]> =>
    (((await client.get(anvils, namespace, "heavy"))?.["spec"] as JsonObject | undefined)?.["ports"] ??
      []) as JsonObject[];
  // Keyed by name: someone's port b is theirs, and stays.
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
  const resyncsBefore = passesSoFar();
  await eventually(() => passesSoFar() >= resyncsBefore + 2 || undefined, {
    what: "two resyncs with port b",
  });
  assert.equal((await ports()).length, 2, "a keyed list keeps someone's item");

  const live = await client.get(crds, undefined, crdName);
  assert.ok(live !== undefined);
  await client.replace(crds, { ...live, spec: anvilCrd(group, false)["spec"] });
  // Atomic now: the declared list is the whole list, which a resync writes back, as Config Sync's re-apply.
  await eventually(async () => (await ports()).length === 1 || undefined, {
    timeoutMs: 30_000,
    what: "the added port removed by a resync",
  });
});
