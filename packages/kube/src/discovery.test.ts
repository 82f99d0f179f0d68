import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  discover,
  parseAggregatedDiscovery,
  parseApiGroupList,
  parseApiResourceList,
  type DiscoveryClient,
} from "./discovery.ts";
import { aggregatedCore, aggregatedNamed, FakeDiscovery } from "./discovery-fixtures.test-support.ts";

void describe("aggregated discovery", () => {
  void it("maps every resource with its scope and verbs, versions preferred first", () => {
    const { groups, failed } = parseAggregatedDiscovery(aggregatedNamed());
    const autoscaling = groups.find((g) => g.name === "autoscaling");
    assert.deepEqual(autoscaling?.versions, ["v2", "v1"]);
    const deployments = groups.find((g) => g.name === "apps")?.resources.find((r) => r.kind === "Deployment");
    assert.deepEqual(deployments, {
      group: "apps",
      version: "v1",
      kind: "Deployment",
      resource: "deployments",
      namespaced: true,
      verbs: ["create", "get", "list", "watch"],
    });
    assert.deepEqual(failed, ["metrics.k8s.io/v1beta1"]);
    assert.equal(
      groups.find((g) => g.name === "metrics.k8s.io")?.versions.length,
      0,
      "a stale group-version is not served from outdated data",
    );
  });

  void it("names the core group ''", () => {
    const { groups } = parseAggregatedDiscovery(aggregatedCore());
    assert.equal(groups[0]?.name, "");
    assert.deepEqual(
      groups[0]?.resources.map((r) => [r.kind, r.namespaced]),
      [
        ["ConfigMap", true],
        ["Namespace", false],
      ],
    );
  });
});

void describe("legacy discovery", () => {
  void it("puts the preferred version first and leaves subresources out", () => {
    const groups = parseApiGroupList({
      kind: "APIGroupList",
      groups: [
        {
          name: "autoscaling",
          versions: [
            { groupVersion: "autoscaling/v1", version: "v1" },
            { groupVersion: "autoscaling/v2", version: "v2" },
          ],
          preferredVersion: { groupVersion: "autoscaling/v2", version: "v2" },
        },
      ],
    });
    assert.deepEqual(groups, [{ name: "autoscaling", versions: ["v2", "v1"] }]);
    const resources = parseApiResourceList(
      {
        resources: [
          { name: "pods", namespaced: true, kind: "Pod", verbs: ["get"] },
          { name: "pods/status", namespaced: true, kind: "Pod", verbs: ["get"] },
        ],
      },
      "",
      "v1",
    );
    assert.deepEqual(resources, [
      { group: "", version: "v1", kind: "Pod", resource: "pods", namespaced: true, verbs: ["get"] },
    ]);
  });

  void it("falls back to walking group-versions when the server does not aggregate, skipping ones that fail", async () => {
    const fake = new FakeDiscovery({ aggregated: false });
    const d = await discover(fake as DiscoveryClient);
    assert.equal(d.aggregated, false);
    assert.deepEqual(
      d.groups.map((g) => [g.name, g.versions]),
      [
        ["", ["v1"]],
        ["apps", ["v1"]],
        ["broken.example.com", []],
      ],
    );
    assert.deepEqual(d.failed, ["broken.example.com/v1"]);
    assert.deepEqual(fake.paths.sort(), ["/api", "/api/v1", "/apis", "/apis/apps/v1", "/apis/broken.example.com/v1"]);
  });

  void it("uses two requests when the server aggregates", async () => {
    const fake = new FakeDiscovery({ aggregated: true });
    const d = await discover(fake as DiscoveryClient);
    assert.equal(d.aggregated, true);
    assert.deepEqual(fake.paths.sort(), ["/api", "/apis"]);
    assert.ok(
      fake.accepts.every((a) => a?.startsWith("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")),
    );
  });
});
