import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sumRequests } from "./apiserver-metrics.ts";
import { parseLine, parseSamples } from "./prometheus-text.ts";

const text = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 4
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 2
apiserver_request_total{code="201",component="apiserver",dry_run="All",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 1
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="PUT",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apiextensions.k8s.io",resource="customresourcedefinitions",scope="resource",subresource="status",verb="APPLY",version="v1"} 6
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="namespaces",scope="resource",subresource="",verb="DELETECOLLECTION",version="v1"} 1
apiserver_request_total_extra{verb="POST"} 100
apiserver_request_duration_seconds_bucket{verb="POST",le="0.1"} 7
`;

void describe("apiserver_request_total", () => {
  void it("parses only the named metric's samples", () => {
    const samples = parseSamples(text, "apiserver_request_total");
    assert.equal(samples.length, 6);
    assert.deepEqual(samples[0]?.labels["verb"], "LIST");
    assert.equal(samples[0]?.value, 4);
  });

  void it("sums by verb and counts POST/PUT/PATCH/APPLY/DELETE/DELETECOLLECTION as writes", () => {
    const all = sumRequests(parseSamples(text, "apiserver_request_total"));
    assert.deepEqual(all.byVerb, { LIST: 4, POST: 3, PUT: 3, APPLY: 6, DELETECOLLECTION: 1 });
    assert.equal(all.writes, 13);
    assert.equal(all.total, 17);
  });

  void it("filters by labels, dry run and response code", () => {
    const samples = parseSamples(text, "apiserver_request_total");
    assert.equal(sumRequests(samples, { resource: "configmaps" }).writes, 6);
    assert.equal(sumRequests(samples, { resource: "configmaps", includeDryRun: false }).writes, 5);
    assert.equal(sumRequests(samples, { resource: "configmaps", code: (c) => c < 400 }).writes, 3);
    assert.equal(sumRequests(samples, { group: "apiextensions.k8s.io", subresource: "status" }).byVerb["APPLY"], 6);
  });

  void it("reads escaped label values", () => {
    const s = parseLine('m{a="x\\"y\\\\z",b="line\\nbreak"} 1.5 1700000000', "m");
    assert.deepEqual(s, { name: "m", labels: { a: 'x"y\\z', b: "line\nbreak" }, value: 1.5 });
    assert.equal(parseLine("m_total 3", "m"), undefined);
    assert.deepEqual(parseLine("m 3", "m")?.value, 3);
  });
});
