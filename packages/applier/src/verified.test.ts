import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  configMapMapping,
  type KubeClient,
  type KubeObject,
  type ResourceMapping,
  type RestMapper,
} from "@driftless/kube";
import { Annotator, PatchMaker } from "@driftless/objectmatcher";
import { applyObject } from "./apply-object.ts";
import type { ApplyOptions } from "./apply-options.ts";
import { Operation } from "./apply-outcome.ts";
import type { DesiredObject } from "./desired.ts";
import type { LiveState } from "./live-state.ts";
import { VerifiedMatches } from "./verified-matches.ts";

const desired = (name: string, value: string): DesiredObject => ({
  id: { group: "", kind: "ConfigMap", namespace: "ns", name },
  apiVersion: "v1",
  object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns" }, data: { value } },
  sourcePath: `${name}.yaml`,
  sourceHash: value,
  dependsOn: [],
});
const live = (name: string, resourceVersion: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", resourceVersion },
});

void describe("VerifiedMatches", () => {
  void it("forgets the objects of a group whose CRD's schema changed, and only those", () => {
    const verified = new VerifiedMatches();
    const core = desired("a", "1");
    const custom: DesiredObject = {
      ...desired("b", "1"),
      id: { group: "example.com", kind: "Gadget", namespace: "ns", name: "b" },
    };
    verified.record(core, live("a", "10"), "Current");
    verified.record(custom, live("b", "11"), "Current");
    verified.forgetGroup("example.com");
    assert.equal(verified.lookup(custom, "11"), undefined, "matched again under the new schema");
    assert.equal(verified.lookup(core, "10"), "Current");
  });
  void it("answers only for the same declaration object against the same live resourceVersion", () => {
    const verified = new VerifiedMatches();
    const a = desired("a", "1");
    verified.record(a, live("a", "10"), "Current");
    assert.equal(verified.lookup(a, "10"), "Current");
    assert.equal(verified.lookup(a, "11"), undefined, "the live object changed");
    assert.equal(verified.lookup(desired("a", "1"), "10"), undefined, "a new declaration, even if equal");
    assert.equal(verified.lookup(a, undefined), undefined, "not cached: nothing to vouch for");
  });

  void it("forgets objects no longer declared", () => {
    const verified = new VerifiedMatches();
    const a = desired("a", "1");
    const b = desired("b", "1");
    verified.record(a, live("a", "10"), "Current");
    verified.record(b, live("b", "12"), "InProgress");
    verified.retain([b]);
    assert.equal(verified.size, 1);
    assert.equal(verified.lookup(a, "10"), undefined);
    assert.equal(verified.lookup(b, "12"), "InProgress");
  });
});

/**
 * applyObject against a stand-in API server that stores what it is sent, with a resourceVersion,
 * after `mutate` (what an admission webhook or the server's defaulting might do to it).
 */
function server(mutate: (obj: KubeObject) => KubeObject = (obj) => obj): ApplyOptions {
  const stored = new Map<string, KubeObject>();
  let version = 0;
  const store = (obj: KubeObject): KubeObject => {
    const kept = mutate({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } });
    stored.set(obj.metadata.name, kept);
    return kept;
  };
  const live: LiveState = {
    get: (_m, _ns, name) => Promise.resolve(stored.get(name)),
    remember: () => undefined,
    forget: () => undefined,
    refresh: (_m, _ns, name) => Promise.resolve(stored.get(name)),
    cachedResourceVersion: (_m, _ns, name) => stored.get(name)?.metadata.resourceVersion,
  };
  const annotator = new Annotator();
  return {
    client: { create: (_m: ResourceMapping, obj: KubeObject) => Promise.resolve(store(obj)) } as unknown as KubeClient,
    mapper: { mappingFor: () => Promise.resolve(configMapMapping) } as unknown as RestMapper,
    live,
    sync: { kind: "RepoSync", namespace: "ns", name: "repo-sync" },
    commit: "0123456789abcdef0123456789abcdef01234567",
    annotator,
    matcher: new PatchMaker(annotator),
    verified: new VerifiedMatches(),
  };
}

void describe("applyObject and VerifiedMatches", () => {
  void it("records a created object whose answer matches its declaration, so the next pass skips it", async () => {
    const options = server();
    const a = desired("a", "1");
    assert.equal((await applyObject(a, options)).operation, Operation.Created);
    assert.equal(options.verified?.size, 1);
    assert.equal(options.verified?.lookup(a, "1"), "Current");
    assert.equal((await applyObject(a, options)).operation, Operation.Unchanged);
  });

  void it("does not record an answer in which a declared field was changed (a mutating webhook)", async () => {
    const options = server((obj) => ({ ...obj, data: { value: "mutated" } }));
    const a = desired("a", "1");
    assert.equal((await applyObject(a, options)).operation, Operation.Created);
    assert.equal(options.verified?.size, 0);
  });
});
