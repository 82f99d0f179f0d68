import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtinKinds } from "./builtin-kinds.ts";
import type { Manifest } from "./manifest.ts";
import { readSource } from "./read-source.ts";
import type { SourceResult } from "./result.ts";
import { placeObject } from "./scope.ts";
import { configMap, fakeDiscovery, withTree } from "./testing.ts";

function manifest(kind: string, namespace?: string): Manifest {
  return {
    apiVersion: "v1",
    kind,
    group: "",
    version: "v1",
    metadata: { name: "x", ...(namespace !== undefined ? { namespace } : {}) },
    raw: {},
    sourcePath: "x.yaml",
    dependsOn: [],
  };
}

const root = { kind: "RootSync" } as const;
const repo = { kind: "RepoSync", namespace: "team-a" } as const;

void describe("placeObject", () => {
  void it('puts a RootSync\'s namespaced object without a namespace in "default", as Config Sync does', () => {
    assert.deepEqual(placeObject(manifest("ConfigMap"), true, root), { ok: true, namespace: "default" });
    assert.deepEqual(placeObject(manifest("ConfigMap", "shop"), true, root), { ok: true, namespace: "shop" });
  });

  void it("puts a RepoSync's namespaced object without a namespace in the RepoSync's namespace", () => {
    assert.deepEqual(placeObject(manifest("ConfigMap"), true, repo), { ok: true, namespace: "team-a" });
    assert.deepEqual(placeObject(manifest("ConfigMap", "team-a"), true, repo), { ok: true, namespace: "team-a" });
  });

  void it("refuses a RepoSync object in another namespace (KNV1058)", () => {
    const placement = placeObject(manifest("ConfigMap", "team-b"), true, repo);
    assert.ok(!placement.ok);
    assert.equal(placement.error.code, "KNV1058");
    assert.match(
      placement.error.message,
      /^Resources in the "team-a" repo must either omit metadata\.namespace or declare metadata\.namespace="team-a"$/,
    );
  });

  void it("refuses a cluster-scoped object in a RepoSync (KNV1058)", () => {
    const placement = placeObject(manifest("Namespace"), false, repo);
    assert.ok(!placement.ok);
    assert.equal(placement.error.code, "KNV1058");
    // Config Sync's words, its Go form of the type and the object's name.
    assert.equal(
      placement.error.message,
      "Resources in namespace Repos must be Namespace-scoped type, but objects of type /v1, Kind=Namespace are Cluster-scoped. Move x to the Root repo.",
    );
  });

  void it("refuses a cluster-scoped object that declares a namespace (KNV1052), and places it nowhere otherwise", () => {
    const placement = placeObject(manifest("ClusterRole", "default"), false, root);
    assert.ok(!placement.ok);
    assert.equal(placement.error.code, "KNV1052");
    assert.deepEqual(placeObject(manifest("ClusterRole"), false, root), { ok: true, namespace: "" });
  });
});

void describe("placeObject, for a kind nobody defines (offline)", () => {
  void it("puts a RepoSync's object in its namespace, and refuses one naming another namespace (KNV1058)", () => {
    assert.deepEqual(placeObject(manifest("Gadget"), undefined, repo), { ok: true, namespace: "team-a" });
    assert.deepEqual(placeObject(manifest("Gadget", "team-a"), undefined, repo), { ok: true, namespace: "team-a" });
    const placement = placeObject(manifest("Gadget", "other"), undefined, repo);
    assert.ok(!placement.ok);
    assert.equal(placement.error.code, "KNV1058");
    assert.match(placement.error.message, /^Resources in the "team-a" repo must either omit metadata\.namespace/);
  });

  void it("keeps a RootSync's object where it says it is", () => {
    assert.deepEqual(placeObject(manifest("Gadget"), undefined, root), { ok: true, namespace: "" });
    assert.deepEqual(placeObject(manifest("Gadget", "shop"), undefined, root), { ok: true, namespace: "shop" });
  });
});

void describe("a RepoSync's source: scope of unknown kinds and NamespaceSelectors", () => {
  const gadget = (name: string, namespace?: string): string =>
    `apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: ${name}\n${namespace !== undefined ? `  namespace: ${namespace}\n` : ""}`;
  const selector = `apiVersion: configmanagement.gke.io/v1\nkind: NamespaceSelector\nmetadata: {name: prod}\nspec: {selector: {matchLabels: {env: prod}}}\n`;
  const selected = (name: string, selectorName: string): string =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations: {configmanagement.gke.io/namespace-selector: ${selectorName}}\ndata: {}\n`;
  /** As `driftless vet --sync-kind RepoSync` reads it (offline), or the reconciler (discovery). */
  const read = (files: Record<string, string>, offline = true): Promise<SourceResult> =>
    withTree(files, (dir) =>
      readSource(dir, {
        scope: repo,
        ...(offline ? { kinds: builtinKinds, allowUnknownKinds: true } : { kinds: fakeDiscovery() }),
      }),
    );
  const errors = (result: SourceResult): string[] => result.errors.map((e) => `${e.code} ${e.resources[0]?.name}`);

  void it("offline, refuses an object of an unknown kind naming another namespace (KNV1058), and places the others in the RepoSync's namespace", async () => {
    const result = await read({
      "a.yaml": `${gadget("g")}---\n${gadget("g2", "other")}---\n${gadget("g3", "team-a")}`,
    });
    assert.deepEqual(errors(result), ["KNV1058 g2"]);
    assert.match(
      result.errors[0]?.message ?? "",
      /^Resources in the "team-a" repo must either omit metadata\.namespace/,
    );
    assert.equal(result.errors[0]?.resources[0]?.sourcePath, "a.yaml");
    assert.ok(!result.complete);
    assert.deepEqual(
      result.partialObjects.map((o) => `${o.id.namespace}/${o.id.name} ${o.namespaced}`),
      ["team-a/g true", "team-a/g3 true"],
    );
  });

  void it("refuses a NamespaceSelector (KNV1058), offline and with discovery", async () => {
    for (const offline of [true, false]) {
      const result = await read({ "sel.yaml": selector, "cm.yaml": configMap("cm") }, offline);
      assert.deepEqual(errors(result), ["KNV1058 prod"], `offline: ${offline}`);
      assert.match(
        result.errors[0]?.message ?? "",
        /objects of type configmanagement\.gke\.io\/v1, Kind=NamespaceSelector are Cluster-scoped\. Move prod to the Root repo\./,
      );
    }
  });

  void it("reports only the refused NamespaceSelector, not the objects naming it (KNV1013 stays for undeclared ones)", async () => {
    const result = await read({ "sel.yaml": selector, "cm.yaml": selected("cm", "prod") });
    assert.deepEqual(errors(result), ["KNV1058 prod"]);
    assert.deepEqual(errors(await read({ "cm.yaml": selected("cm", "nope") })), ["KNV1013 cm"]);
  });

  void it("with discovery, keeps reporting an unknown kind as such (KNV1021) whatever its namespace", async () => {
    const result = await read({ "a.yaml": `${gadget("g2", "other")}---\n${configMap("cm", "other")}` }, false);
    assert.deepEqual(errors(result), ["KNV1021 g2", "KNV1058 cm"]);
  });
});
