/**
 * The matcher's field semantics on the real control plane: custom resources merge their keyed lists as
 * the CRD's schema says (another field manager's item survives, and costs no write), and a pointer
 * field's declared `false` is written (issue 13).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { KubeClient, RestMapper } from "@driftless/kube";
import {
  gadgetCrd,
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  testEnv,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const yaml = (obj: unknown): string => JSON.stringify(obj);

test("a keyed list item another field manager added survives, without a write; a declared change keeps it", async (t) => {
  const id = suffix();
  const group = `k${id}.example.com`;
  const namespace = `keyed-${id}`;
  const name = `keyed-${id}`;
  const gadget = (value: string): unknown => ({
    apiVersion: `${group}/v1`,
    kind: "Gadget",
    metadata: { name: "g", namespace },
    spec: { items: [{ name: "a", value }] },
  });
  const repo = await TestRepo.create(t);
  await repo.write("config/crd.yaml", yaml(gadgetCrd(group, "map")));
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/gadget.yaml", yaml(gadget("1")));
  const first = await repo.commit("a CRD with a keyed list, and one item");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  // resyncPeriodMs 0: every poll is a full pass, so every poll matches the Gadget again.
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );
  await rootSynced(name, first);
  const passesBefore = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passesBefore + 1, { what: "one more pass" });

  const writesBefore = reconciler.client.requests.writes();
  const other = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => other.close());
  const mapping = await new RestMapper(other).mappingFor(`${group}/v1`, "Gadget");
  assert.ok(mapping);
  await other.patch(
    mapping,
    namespace,
    "g",
    {
      apiVersion: `${group}/v1`,
      kind: "Gadget",
      metadata: { name: "g", namespace },
      spec: { items: [{ name: "b", value: "theirs" }] },
    },
    "apply",
    { fieldManager: "someone-else" },
  );
  const readItems = async (): Promise<JsonObject[]> => {
    const live = (await customApi().getNamespacedCustomObject({
      group,
      version: "v1",
      namespace,
      plural: "gadgets",
      name: "g",
    })) as JsonObject;
    return ((live["spec"] as JsonObject)["items"] ?? []) as JsonObject[];
  };
  assert.deepEqual(await readItems(), [
    { name: "a", value: "1" },
    { name: "b", value: "theirs" },
  ]);
  // The remediator sees the change at once; three full passes match it again.
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 3, { what: "three more passes" });
  assert.equal(
    reconciler.client.requests.writes() - writesBefore,
    0,
    "driftless wrote after another manager added an item",
  );
  assert.deepEqual(await readItems(), [
    { name: "a", value: "1" },
    { name: "b", value: "theirs" },
  ]);

  await repo.write("config/gadget.yaml", yaml(gadget("2")));
  const second = await repo.commit("a changes");
  await rootSynced(name, second);
  assert.deepEqual(await readItems(), [
    { name: "a", value: "2" },
    { name: "b", value: "theirs" },
  ]);
});

test("a Deployment that gains securityContext.allowPrivilegeEscalation: false in a new commit gets it written", async (t) => {
  const id = suffix();
  const namespace = `harden-${id}`;
  const name = `harden-${id}`;
  const deployment = (securityContext: JsonObject): unknown => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "web", image: "nginx", securityContext }] },
      },
    },
  });
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/web.yaml", yaml(deployment({ runAsNonRoot: true })));
  const first = await repo.commit("a deployment with a security context");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  await repo.write("config/web.yaml", yaml(deployment({ runAsNonRoot: true, allowPrivilegeEscalation: false })));
  const second = await repo.commit("no privilege escalation");
  await rootSynced(name, second);
  const live = (await customApi().getNamespacedCustomObject({
    group: "apps",
    version: "v1",
    namespace,
    plural: "deployments",
    name: "web",
  })) as JsonObject;
  const container = (((live["spec"] as JsonObject)["template"] as JsonObject)["spec"] as JsonObject)[
    "containers"
  ] as JsonObject[];
  assert.deepEqual(container[0]?.["securityContext"], { runAsNonRoot: true, allowPrivilegeEscalation: false });
});
