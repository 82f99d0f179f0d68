/**
 * A CRD leaves with its custom resources only: deleting a CRD deletes every custom resource of it, in
 * every namespace, so one that leaves Git while others' custom resources of it stay (a user's, another
 * sync's) is kept and reported until none is left; a commit that removes the CRD but still declares
 * custom resources of it is refused (KNV1047); Foreground deletion of the sync leaves it, released.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { ManagedAnnotation } from "@driftless/api";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncGone,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { adminClient, crds } from "../kube/support.ts";

const json = (obj: unknown): string => JSON.stringify(obj);

function crd(group: string): unknown {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

const namespace = (name: string): unknown => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

interface Setup {
  readonly client: KubeClient;
  readonly widgets: ResourceMapping;
  readonly crdName: string;
  /** The sync that declares the CRD, a Namespace and a Widget in it. */
  readonly owner: { readonly name: string; readonly namespace: string; readonly repo: TestRepo };
  /** Another sync declaring a Widget of that CRD in its own Namespace. */
  readonly other: { readonly name: string; readonly namespace: string; readonly repo: TestRepo };
  /** A Namespace where the test, as a user, created a Widget nobody manages. */
  readonly userNamespace: string;
}

/** The CRD's sync, another sync's Widget and a user's Widget, all live and synced. */
async function crdWithForeignWidgets(t: TestContext, annotations: Record<string, string> = {}): Promise<Setup> {
  const id = suffix();
  const group = `crdp-${id}.example.com`;
  const crdName = `widgets.${group}`;
  const widgets: ResourceMapping = {
    group,
    version: "v1",
    kind: "Widget",
    resource: "widgets",
    namespaced: true,
    verbs: ["create", "delete", "get", "list"],
  };
  const client = await adminClient(t);
  const owner = { name: `crdp-${id}`, namespace: `crdp-${id}`, repo: await TestRepo.create(t) };
  const other = { name: `crdp-${id}-b`, namespace: `crdp-${id}-b`, repo: await TestRepo.create(t) };
  const userNamespace = `crdp-${id}-u`;
  t.after(async () => {
    for (const name of [owner.namespace, other.namespace, userNamespace])
      await coreApi()
        .deleteNamespace({ name })
        .catch(() => undefined);
    await client.delete(crds, undefined, crdName).catch(() => undefined);
  });

  await owner.repo.write("config/crd.yaml", json(crd(group)));
  await owner.repo.write("config/ns.yaml", json(namespace(owner.namespace)));
  await owner.repo.write("config/widget.yaml", json(widget(group, owner.namespace, "ours")));
  const first = await owner.repo.commit("a CRD, a namespace and a widget");
  await createRootSync(owner.name, owner.repo, { annotations });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: owner.name });
  await rootSynced(owner.name, first);

  await other.repo.write("config/ns.yaml", json(namespace(other.namespace)));
  await other.repo.write("config/widget.yaml", json(widget(group, other.namespace, "theirs")));
  const otherFirst = await other.repo.commit("a widget of someone else's CRD");
  await createRootSync(other.name, other.repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: other.name });
  await rootSynced(other.name, otherFirst);

  await coreApi().createNamespace({ body: { metadata: { name: userNamespace } } });
  await client.create(widgets, widget(group, userNamespace, "users") as KubeObject);
  return { client, widgets, crdName, owner, other, userNamespace };
}

function widget(group: string, ns: string, name: string): unknown {
  return { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name, namespace: ns }, spec: { size: 1 } };
}

/**
 * status.<step> once the pass on `commit` ended (Syncing False): status.source names a commit from its fetch on,
 * before the pass has found its errors.
 */
function stepAt(name: string, step: "source" | "sync", commit: string): Promise<JsonObject> {
  return eventually(
    async () => {
      const status = await rootSyncStatus(name);
      const block = status[step] as JsonObject | undefined;
      const conditions = (status["conditions"] ?? []) as JsonObject[];
      const syncing = conditions.find((c) => c["type"] === "Syncing");
      return block?.["commit"] === commit && syncing?.["status"] === "False" ? block : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report status.${step} at ${commit.slice(0, 7)}` },
  );
}

const errorsOf = (block: JsonObject): JsonObject[] => (block["errors"] ?? []) as JsonObject[];

async function liveCrd(setup: Setup): Promise<KubeObject | undefined> {
  const live = await setup.client.get(crds, undefined, setup.crdName);
  return live?.metadata.deletionTimestamp === undefined ? live : undefined;
}

test("a CRD that leaves Git while a user's and another sync's custom resources of it stay is kept and reported, and pruned once none is left", async (t) => {
  const setup = await crdWithForeignWidgets(t);
  const { client, widgets, owner, other, userNamespace } = setup;

  await owner.repo.remove("config/crd.yaml");
  await owner.repo.remove("config/widget.yaml");
  const second = await owner.repo.commit("remove the CRD and our widget");
  const sync = await stepAt(owner.name, "sync", second);

  assert.ok(await liveCrd(setup), "the CRD was deleted while custom resources of it stayed");
  assert.ok(await client.get(widgets, userNamespace, "users"), "the user's widget was deleted");
  assert.ok(await client.get(widgets, other.namespace, "theirs"), "the other sync's widget was deleted");
  assert.equal(await client.get(widgets, owner.namespace, "ours"), undefined, "our own widget was not pruned");
  const errors = errorsOf(sync);
  const inUse = errors.find((e) => /CustomResourceDefinition still in use/.test(String(e["errorMessage"])));
  assert.ok(inUse, `no "still in use" error in ${JSON.stringify(errors)}`);
  assert.equal(inUse["code"], "2009");
  assert.match(String(inUse["errorMessage"]), new RegExp(setup.crdName));
  assert.match(String(inUse["errorMessage"]), /2 custom resource\(s\)/);

  // Once nothing of it would go with it (the user deletes theirs, the other sync prunes its own), it goes.
  await client.delete(widgets, userNamespace, "users");
  await other.repo.remove("config/widget.yaml");
  await rootSynced(other.name, await other.repo.commit("drop the widget"));
  await eventually(async () => (await client.get(crds, undefined, setup.crdName)) === undefined, {
    timeoutMs: 60_000,
    what: "the unused CRD to be pruned",
  });
});

test("a commit that removes a CRD but still declares custom resources of it is refused with KNV1047, and nothing is pruned", async (t) => {
  const setup = await crdWithForeignWidgets(t);
  const { client, widgets, owner, userNamespace } = setup;

  await owner.repo.remove("config/crd.yaml");
  const second = await owner.repo.commit("remove the CRD but keep our widget");
  const source = await stepAt(owner.name, "source", second);

  const errors = errorsOf(source);
  const removal = errors.find((e) => e["code"] === "1047");
  assert.ok(removal, `no KNV1047 on status.source in ${JSON.stringify(errors)}`);
  assert.match(String(removal["errorMessage"]), /widget\.yaml declares Widget crdp-[0-9a-f]+\/ours/);
  assert.match(String(removal["errorMessage"]), new RegExp(setup.crdName));
  assert.ok(await liveCrd(setup), "the CRD was deleted");
  assert.ok(await client.get(widgets, owner.namespace, "ours"), "the declared widget was deleted with its CRD");
  assert.ok(await client.get(widgets, userNamespace, "users"), "the user's widget was deleted");
});

test("Foreground deletion of a sync leaves its CRD, released, while others' custom resources of it stay, and says so in an Event", async (t) => {
  const setup = await crdWithForeignWidgets(t, { "configsync.gke.io/deletion-propagation-policy": "Foreground" });
  const { client, widgets, owner, other, userNamespace } = setup;

  await customApi().deleteNamespacedCustomObject({ ...rootSyncs, name: owner.name });
  await rootSyncGone(owner.name);

  const kept = await liveCrd(setup);
  assert.ok(kept, "Foreground deletion deleted a CRD whose custom resources stay");
  assert.equal(kept.metadata.annotations?.[ManagedAnnotation.OwningInventory], undefined, "the kept CRD is still ours");
  assert.ok(await client.get(widgets, userNamespace, "users"), "the user's widget was deleted");
  assert.ok(await client.get(widgets, other.namespace, "theirs"), "the other sync's widget was deleted");
  assert.equal(await client.get(widgets, owner.namespace, "ours"), undefined, "Foreground left our own widget");
  const events = await coreApi().listNamespacedEvent({
    namespace: rootSyncNamespace,
    fieldSelector: `involvedObject.name=${owner.name},reason=ObjectsReleased`,
  });
  const messages = events.items.map((e) => e.message ?? "");
  assert.ok(
    messages.some((m) => m.includes(setup.crdName) && /still in use/.test(m)),
    `no ObjectsReleased Event naming the CRD: ${JSON.stringify(messages)}`,
  );
});
