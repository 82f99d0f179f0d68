/**
 * The matcher's field semantics where only the real API server can say what it stores: a one-of
 * member switched in Git (defaulting filled the old one in), a custom resource's schema defaults, and
 * a custom resource's empty values, which are stored as sent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { KubeClient, RestMapper } from "@driftless/kube";
import {
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
import { namespacedCrd } from "../../support/crds.ts";

const yaml = (obj: unknown): string => JSON.stringify(obj);

function namespaceObject(name: string): JsonObject {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name } };
}

test("a liveness probe switched in Git from httpGet to tcpSocket, then to exec, syncs with one handler live", async (t) => {
  const id = suffix();
  const namespace = `probe-${id}`;
  const name = `probe-${id}`;
  const deployment = (livenessProbe: JsonObject): JsonObject => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "web", image: "nginx", livenessProbe }] },
      },
    },
  });
  const liveProbe = async (): Promise<JsonObject> => {
    const live = (await customApi().getNamespacedCustomObject({
      group: "apps",
      version: "v1",
      namespace,
      plural: "deployments",
      name: "web",
    })) as JsonObject;
    const podSpec = ((live["spec"] as JsonObject)["template"] as JsonObject)["spec"] as JsonObject;
    return ((podSpec["containers"] as JsonObject[])[0]?.["livenessProbe"] ?? {}) as JsonObject;
  };
  const handlers = (probe: JsonObject): string[] =>
    ["exec", "httpGet", "tcpSocket", "grpc"].filter((key) => probe[key] !== undefined);

  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", yaml(namespaceObject(namespace)));
  await repo.write("config/web.yaml", yaml(deployment({ httpGet: { path: "/healthz", port: 80 } })));
  const first = await repo.commit("an httpGet liveness probe");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  // The API server filled in httpGet.scheme, which the declaration never named.
  assert.equal(((await liveProbe())["httpGet"] as JsonObject)["scheme"], "HTTP");

  await repo.write("config/web.yaml", yaml(deployment({ tcpSocket: { port: 80 } })));
  const second = await repo.commit("a tcpSocket liveness probe");
  await rootSynced(name, second);
  assert.deepEqual(handlers(await liveProbe()), ["tcpSocket"]);

  await repo.write("config/web.yaml", yaml(deployment({ exec: { command: ["true"] } })));
  const third = await repo.commit("an exec liveness probe");
  await rootSynced(name, third);
  assert.deepEqual(handlers(await liveProbe()), ["exec"]);
});

/** `gizmos.<group>`: a custom resource whose schema defaults fields in an atomic list, an atomic map and a list-map key. */
function gizmoCrd(group: string): JsonObject {
  const spec = {
    type: "object",
    properties: {
      steps: {
        type: "array",
        items: {
          type: "object",
          properties: { name: { type: "string" }, weight: { type: "integer", default: 1 } },
        },
      },
      selector: {
        type: "object",
        "x-kubernetes-map-type": "atomic",
        properties: { app: { type: "string" }, mode: { type: "string", default: "fast" } },
      },
      ports: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["port", "protocol"],
        items: {
          type: "object",
          required: ["port"],
          properties: {
            port: { type: "integer" },
            protocol: { type: "string", default: "TCP" },
            name: { type: "string" },
          },
        },
      },
    },
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `gizmos.${group}` },
    spec: {
      group,
      names: { kind: "Gizmo", plural: "gizmos", singular: "gizmo", listKind: "GizmoList" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", properties: { spec } } },
        },
      ],
    },
  };
}

test("a custom resource whose schema defaults fields of an atomic list, an atomic map and a list-map key syncs, and an idle resync writes nothing", async (t) => {
  const id = suffix();
  const group = `d${id}.example.com`;
  const namespace = `defaults-${id}`;
  const name = `defaults-${id}`;
  const gizmo = (portName?: string): JsonObject => ({
    apiVersion: `${group}/v1`,
    kind: "Gizmo",
    metadata: { name: "g", namespace },
    spec: {
      steps: [{ name: "a" }],
      selector: { app: "web" },
      ports: [{ port: 80, ...(portName === undefined ? {} : { name: portName }) }],
    },
  });
  const liveSpec = async (): Promise<JsonObject> => {
    const live = (await customApi().getNamespacedCustomObject({
      group,
      version: "v1",
      namespace,
      plural: "gizmos",
      name: "g",
    })) as JsonObject;
    return live["spec"] as JsonObject;
  };
  const repo = await TestRepo.create(t);
  await repo.write("config/crd.yaml", yaml(gizmoCrd(group)));
  await repo.write("config/ns.yaml", yaml(namespaceObject(namespace)));
  await repo.write("config/gizmo.yaml", yaml(gizmo()));
  const first = await repo.commit("a CRD with schema defaults, and a Gizmo relying on them");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  // resyncPeriodMs 0: every poll is a full pass, so every poll matches the Gizmo again.
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );
  await rootSynced(name, first);
  // The API server filled in every default the declaration left out.
  assert.deepEqual(await liveSpec(), {
    steps: [{ name: "a", weight: 1 }],
    selector: { app: "web", mode: "fast" },
    ports: [{ port: 80, protocol: "TCP" }],
  });
  const passes = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passes + 1, { what: "one more pass" });
  const writesBefore = reconciler.client.requests.writes();
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 3, { what: "three more passes" });
  assert.equal(reconciler.client.requests.writes() - writesBefore, 0, "an idle resync wrote the Gizmo");

  await repo.write("config/gizmo.yaml", yaml(gizmo("http")));
  const second = await repo.commit("the port gets a name");
  await rootSynced(name, second);
  assert.deepEqual((await liveSpec())["ports"], [{ port: 80, protocol: "TCP", name: "http" }]);
});

test("a custom resource's declared empty string and empty list are restored when changed live, and cost no write while live", async (t) => {
  const id = suffix();
  const group = `e${id}.example.com`;
  const namespace = `empty-${id}`;
  const name = `empty-${id}`;
  const crd: JsonObject = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `notes.${group}` },
    spec: {
      group,
      names: { kind: "Note", plural: "notes", singular: "note", listKind: "NoteList" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  properties: { mem: { type: "string" }, list: { type: "array", items: { type: "string" } } },
                },
              },
            },
          },
        },
      ],
    },
  };
  const note: JsonObject = {
    apiVersion: `${group}/v1`,
    kind: "Note",
    metadata: { name: "n", namespace },
    spec: { mem: "", list: [] },
  };
  const liveSpec = async (): Promise<JsonObject> => {
    const live = (await customApi().getNamespacedCustomObject({
      group,
      version: "v1",
      namespace,
      plural: "notes",
      name: "n",
    })) as JsonObject;
    return live["spec"] as JsonObject;
  };
  const repo = await TestRepo.create(t);
  await repo.write("config/crd.yaml", yaml(crd));
  await repo.write("config/ns.yaml", yaml(namespaceObject(namespace)));
  await repo.write("config/note.yaml", yaml(note));
  const first = await repo.commit("a Note declaring an empty string and an empty list");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );
  await rootSynced(name, first);
  assert.deepEqual(await liveSpec(), { mem: "", list: [] });
  const passes = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passes + 1, { what: "one more pass" });
  const writesBefore = reconciler.client.requests.writes();
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 3, { what: "three more passes" });
  assert.equal(reconciler.client.requests.writes() - writesBefore, 0, "an idle resync wrote the Note");

  const other = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => other.close());
  const mapping = await new RestMapper(other).mappingFor(`${group}/v1`, "Note");
  assert.ok(mapping);
  await other.patch(mapping, namespace, "n", { spec: { mem: "x", list: ["x"] } }, "merge");
  await eventually(
    async () => {
      const spec = await liveSpec();
      return spec["mem"] === "" && Array.isArray(spec["list"]) && spec["list"].length === 0;
    },
    { what: "the declared empty string and list restored", timeoutMs: 20_000 },
  );
});

test("a custom resource's map dropped from Git is removed whole, not left as {}, as Config Sync's server-side apply removes it", async (t) => {
  const id = suffix();
  const group = `m${id}.example.com`;
  const namespace = `map-${id}`;
  const name = `map-${id}`;
  // spec.extra keeps whatever is sent, so an emptied map stays as `{}` unless removed whole.
  const crd = namespacedCrd(group, "Widget", {
    size: { type: "integer" },
    extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
  });
  const widget = (spec: JsonObject): JsonObject => ({
    apiVersion: `${group}/v1`,
    kind: "Widget",
    metadata: { name: "w", namespace },
    spec,
  });
  const repo = await TestRepo.create(t);
  await repo.write("config/crd.yaml", yaml(crd));
  await repo.write("config/ns.yaml", yaml(namespaceObject(namespace)));
  await repo.write("config/widget.yaml", yaml(widget({ size: 3, extra: { x: 1, nested: { y: 2 } } })));
  const first = await repo.commit("a Widget with a map");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  await repo.write("config/widget.yaml", yaml(widget({ size: 3 })));
  await rootSynced(name, await repo.commit("drop the map"));
  const live = (await customApi().getNamespacedCustomObject({
    group,
    version: "v1",
    namespace,
    plural: "widgets",
    name: "w",
  })) as JsonObject;
  assert.deepEqual(live["spec"], { size: 3 });
});
