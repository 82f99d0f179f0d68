/** What a request listener is told: the path each request went to, and the resource it names. */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient } from "./client.ts";
import { requestResource } from "./request-counter.ts";
import type { ResourceMapping } from "./types.ts";

const cm: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: [],
};

let server: http.Server;

before(async () => {
  // Answers every request with the object it was sent (or an empty ConfigMap), and a watch with one event.
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns" } };
      res.writeHead(200, { "content-type": "application/json" });
      if (req.url?.includes("watch=1") === true) res.end(`${JSON.stringify({ type: "ADDED", object })}\n`);
      else res.end(chunks.length === 0 ? JSON.stringify(object) : Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});

after(() => {
  server.closeAllConnections();
  server.close();
});

async function client(): Promise<KubeClient> {
  const kc = new KubeConfig();
  const { port } = server.address() as AddressInfo;
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: false }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return KubeClient.fromConfig(kc, { userAgent: "driftless-test" });
}

void describe("request listener", () => {
  void it("is told each request's path without its query, watches included", async () => {
    const c = await client();
    const heard: string[] = [];
    c.requests.onRequest((verb, _status, _ms, path) => heard.push(`${verb} ${path}`));
    const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns" } };
    await c.create(cm, object, { fieldManager: "driftless" });
    await c.patch(cm, "ns", "a", object, "apply", { fieldManager: "driftless", force: true });
    await c.get(cm, "ns", "a");
    const abort = new AbortController();
    for await (const _ of c.watch(cm, { namespace: "ns", resourceVersion: "1", signal: abort.signal })) abort.abort();
    c.close();
    assert.deepEqual(heard, [
      "create /api/v1/namespaces/ns/configmaps",
      "patch /api/v1/namespaces/ns/configmaps/a",
      "get /api/v1/namespaces/ns/configmaps/a",
      "watch /api/v1/namespaces/ns/configmaps",
    ]);
  });
});

void describe("requestResource", () => {
  void it("names the resource and subresource as apiserver_request_total labels them", () => {
    const cases: [string, string][] = [
      ["/apis/apps/v1/namespaces/config-management-system/deployments", "deployments"],
      ["/apis/apps/v1/namespaces/config-management-system/deployments/ns-reconciler-a?fieldManager=x", "deployments"],
      ["/apis/configsync.gke.io/v1beta1/namespaces/a/reposyncs/repo-sync/status", "reposyncs/status"],
      ["/api/v1/namespaces/a/serviceaccounts/x/token", "serviceaccounts/token"],
      ["/api/v1/namespaces", "namespaces"],
      ["/api/v1/namespaces/a", "namespaces"],
      ["/api/v1/namespaces/a/status", "namespaces/status"],
      ["/api/v1/namespaces/a/finalize", "namespaces/finalize"],
      ["/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/x", "clusterrolebindings"],
      ["/apis/coordination.k8s.io/v1/namespaces/config-management-system/leases/driftless", "leases"],
      ["/metrics", "/metrics"],
      ["/apis/apps/v1", "/apis/apps/v1"],
      ["/api", "/api"],
    ];
    for (const [path, resource] of cases) assert.equal(requestResource(path), resource, path);
  });
});
