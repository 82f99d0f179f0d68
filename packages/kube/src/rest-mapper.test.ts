import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeDiscovery } from "./discovery-fixtures.test-support.ts";
import { RestMapper } from "./rest-mapper.ts";

const widgets = {
  metadata: { name: "example.com" },
  versions: [
    {
      version: "v1",
      resources: [{ resource: "widgets", responseKind: { kind: "Widget" }, scope: "Namespaced", verbs: ["get"] }],
      freshness: "Current",
    },
  ],
};

function discoveries(fake: FakeDiscovery): number {
  return fake.paths.filter((p) => p === "/apis").length;
}

void describe("RestMapper", () => {
  void it("maps by apiVersion and kind, and by group and kind to the preferred version", async () => {
    const fake = new FakeDiscovery({ aggregated: true });
    const mapper = new RestMapper(fake);
    assert.equal((await mapper.mappingFor("v1", "ConfigMap"))?.resource, "configmaps");
    assert.equal((await mapper.mappingFor("v1", "Namespace"))?.namespaced, false);
    assert.equal((await mapper.mappingFor("autoscaling/v1", "HorizontalPodAutoscaler"))?.version, "v1");
    assert.equal((await mapper.mappingForGroupKind("autoscaling", "HorizontalPodAutoscaler"))?.version, "v2");
    assert.equal(discoveries(fake), 1, "hits are served from the cache");
  });

  void it("refreshes once on a miss and finds a kind that appeared since", async () => {
    const fake = new FakeDiscovery({ aggregated: true });
    const mapper = new RestMapper(fake, { minRefreshIntervalMs: 0 });
    await mapper.refresh();
    fake.extraGroups.push(widgets);
    assert.equal((await mapper.mappingFor("example.com/v1", "Widget"))?.resource, "widgets");
    assert.equal(discoveries(fake), 2);
  });

  void it("rate-limits refreshes on misses: concurrent misses share one discovery", async () => {
    const fake = new FakeDiscovery({ aggregated: true });
    const mapper = new RestMapper(fake, { minRefreshIntervalMs: 200 });
    await mapper.refresh();
    const started = performance.now();
    const misses = await Promise.all(
      Array.from({ length: 20 }, () => mapper.mappingFor("nope.example.com/v1", "Nope")),
    );
    assert.ok(misses.every((m) => m === undefined));
    assert.equal(discoveries(fake), 2, "twenty misses, one refresh");
    assert.ok(performance.now() - started >= 150, "the refresh waited for the interval to pass");
  });

  void it("knownMappingFor() answers from discovery as it stands: a miss reads nothing, invalidate() still re-reads", async () => {
    const fake = new FakeDiscovery({ aggregated: true });
    const mapper = new RestMapper(fake, { minRefreshIntervalMs: 0 });
    assert.equal((await mapper.knownMappingFor("v1", "ConfigMap"))?.resource, "configmaps");
    fake.extraGroups.push(widgets);
    assert.equal(await mapper.knownMappingFor("example.com/v1", "Widget"), undefined);
    assert.equal(discoveries(fake), 1, "a miss refreshed discovery");
    mapper.invalidate();
    assert.equal((await mapper.knownMappingFor("example.com/v1", "Widget"))?.resource, "widgets");
    assert.equal(discoveries(fake), 2);
  });

  void it("invalidate() makes the next lookup read discovery again, even on a hit", async () => {
    const fake = new FakeDiscovery({ aggregated: true });
    const mapper = new RestMapper(fake, { minRefreshIntervalMs: 60_000 });
    await mapper.mappingFor("v1", "ConfigMap");
    mapper.invalidate();
    fake.extraGroups.push(widgets);
    await mapper.mappingFor("v1", "ConfigMap");
    assert.equal(discoveries(fake), 2);
    assert.equal((await mapper.mappingFor("example.com/v1", "Widget"))?.kind, "Widget");
    assert.equal(mapper.mappings().length, 6);
    assert.deepEqual(mapper.failedGroupVersions(), ["metrics.k8s.io/v1beta1"]);
  });
});
