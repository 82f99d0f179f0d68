/**
 * A CRD's schema changed under a running reconciler (a keyed list made atomic): what it found with the old
 * schema must not stand, whether or not it may watch CRDs.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import type { KubeObject, ResourceMapping } from "@driftless/kube";
import { createLogger, type ReconcilerOptions } from "@driftless/sync";
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
import { adminClient, crdEstablished, crds } from "../kube/support.ts";

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

/**
 * A RootSync of one Anvil (ports [a]) under a keyed-list CRD, synced by a reconciler started with `options`
 * (`kubeconfig` may use the group made here); returns the Anvil's ports as they are live, and a way to make the
 * CRD's list atomic.
 */
async function syncedAnvil(
  t: TestContext,
  prefix: string,
  options: (group: string) => Promise<Partial<Omit<ReconcilerOptions, "identity">>>,
) {
  const group = `${prefix}${suffix()}.acme.com`;
  const name = `${prefix}-${suffix()}`;
  const crdName = `anvils.${group}`;
  const namespace = await testNamespace(t, prefix);
  const client = await adminClient(t);
  t.after(async () => {
    await customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined);
    await client.delete(crds, undefined, crdName).catch(() => undefined);
  });
  await client.create(crds, anvilCrd(group, true));
  await crdEstablished(client, crdName);
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
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, await options(group));
  await rootSynced(name, commit);
  return {
    client,
    namespace,
    anvils,
    ports: async (): Promise<JsonObject[]> =>
      (((await client.get(anvils, namespace, "heavy"))?.["spec"] as JsonObject | undefined)?.["ports"] ??
        []) as JsonObject[],
    addPortB: () =>
      client.patch(
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
      ),
    makeAtomic: async (): Promise<void> => {
      const live = await client.get(crds, undefined, crdName);
      assert.ok(live !== undefined);
      await client.replace(crds, { ...live, spec: anvilCrd(group, false)["spec"] });
    },
  };
}

test("a reconciler that may list CRDs but not watch them corrects a list item someone adds once the CRD makes the list atomic, where it kept the keyed schema it read before", async (t) => {
  const { client, namespace, anvils, ports, addPortB, makeAtomic } = await syncedAnvil(
    t,
    "crdschema",
    async (group) => ({
      kubeconfig: await limitedKubeconfig(t, await adminClient(t), [
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
      ]),
    }),
  );
  const size = async (): Promise<unknown> =>
    ((await client.get(anvils, namespace, "heavy"))?.["spec"] as JsonObject | undefined)?.["size"];
  // A correction matches the live Anvil: its schema (ports keyed by name) is read from the CRD.
  await client.patch(anvils, namespace, "heavy", { spec: { size: 99 } }, "merge");
  await eventually(async () => (await size()) === 1 || undefined, { what: "the size corrected" });

  await makeAtomic();
  // Atomic now: the declared list is the whole list, so an item someone adds is drift.
  await addPortB();
  await eventually(async () => (await ports()).length === 1 || undefined, {
    timeoutMs: 30_000,
    what: "the added port removed",
  });
});

test("a resync after a CRD makes a keyed list atomic removes the item someone added, where the match found equal under the keyed schema was kept while the object did not change", async (t) => {
  // Every poll is a full pass (a resync): it matches the Anvil, or finds it verified.
  const lines: string[] = [];
  const { ports, addPortB, makeAtomic } = await syncedAnvil(t, "crdverify", async () => ({
    resyncPeriodMs: 1_000,
    log: createLogger({ test: t.name }, { level: "info", write: (line) => void lines.push(line) }),
  }));
  const passesSoFar = (): number => lines.filter((line) => line.includes('"msg":"pass finished"')).length;
  // Keyed by name: someone's port b is theirs, and stays.
  await addPortB();
  const resyncsBefore = passesSoFar();
  await eventually(() => passesSoFar() >= resyncsBefore + 2 || undefined, {
    what: "two resyncs with port b",
  });
  assert.equal((await ports()).length, 2, "a keyed list keeps someone's item");

  await makeAtomic();
  // Atomic now: the declared list is the whole list, which a resync writes back, as Config Sync's re-apply.
  await eventually(async () => (await ports()).length === 1 || undefined, {
    timeoutMs: 30_000,
    what: "the added port removed by a resync",
  });
});
