import assert from "node:assert/strict";
import { test } from "node:test";
import { RestMapper, discover } from "@driftless/kube";
import { eventually, quietly, suffix } from "../../support/index.ts";
import { adminClient, crds } from "./support.ts";

void test("discovery uses aggregated discovery: the whole tree in two requests", async (t) => {
  const client = await adminClient(t);
  const d = await discover(client);
  assert.equal(d.aggregated, true);
  assert.equal(client.requests.count("get"), 2);
  assert.ok(
    d.groups.some((g) => g.name === "configsync.gke.io"),
    "the Config Sync CRDs installed by the test setup are served",
  );
});

void test("maps ConfigMap (namespaced), Namespace (cluster-scoped) and a group's preferred version", async (t) => {
  const client = await adminClient(t);
  const mapper = new RestMapper(client);
  assert.deepEqual(await mapper.mappingFor("v1", "ConfigMap"), {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    resource: "configmaps",
    namespaced: true,
    verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
  });
  const ns = await mapper.mappingFor("v1", "Namespace");
  assert.equal(ns?.resource, "namespaces");
  assert.equal(ns?.namespaced, false);
  assert.equal((await mapper.mappingForGroupKind("apps", "Deployment"))?.resource, "deployments");
  assert.equal((await mapper.mappingForGroupKind("autoscaling", "HorizontalPodAutoscaler"))?.version, "v2");
  assert.equal((await mapper.mappingForGroupKind("configsync.gke.io", "RepoSync"))?.version, "v1beta1");
  assert.equal(client.requests.count("get"), 2, "every lookup after the first is served from the cache");
});

void test("finds a CRD created after the first discovery by refreshing on the miss", async (t) => {
  const client = await adminClient(t);
  const mapper = new RestMapper(client);
  await mapper.refresh();
  const group = `late-${suffix()}.driftless.test`;
  assert.equal(await mapper.mappingFor(`${group}/v1`, "Gadget"), undefined, "not served yet");

  await client.create(crds, {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: "Cluster",
      names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  });
  t.after(() => quietly(`deleting CRD gadgets.${group}`, () => client.delete(crds, undefined, `gadgets.${group}`)));
  const before = client.requests.count("get");
  const started = performance.now();
  const mapping = await eventually(() => mapper.mappingFor(`${group}/v1`, "Gadget"), {
    timeoutMs: 30_000,
    what: "the new CRD to be mapped",
  });
  assert.deepEqual(
    { ...mapping, verbs: [] },
    { group, version: "v1", kind: "Gadget", resource: "gadgets", namespaced: false, verbs: [] },
  );
  assert.equal((await mapper.mappingForGroupKind(group, "Gadget"))?.resource, "gadgets");
  // Rate limit: at most one discovery (two requests) per second while polling, however often we asked.
  const elapsedS = Math.max(1, (performance.now() - started) / 1000);
  assert.ok(
    client.requests.count("get") - before <= 2 * (elapsedS + 1),
    `${client.requests.count("get") - before} discovery requests`,
  );
});
