/**
 * The matcher's field semantics where only the real API server can say what it stores: a one-of
 * member switched in Git (defaulting filled the old one in), a custom resource's schema defaults, and
 * a custom resource's empty values, which are stored as sent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  coreApi,
  createRootSync,
  customApi,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

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
