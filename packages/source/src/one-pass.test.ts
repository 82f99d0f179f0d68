import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ErrorClass, SourceFormat } from "@driftless/api";
import { readSource } from "./read-source.ts";
import type { SourceResult } from "./result.ts";
import { fakeDiscovery, withTree } from "./testing.ts";

const fixtures = join(import.meta.dirname, "..", "..", "..", "test", "fixtures", "hierarchy");

/** What the reconciler reads: discovery answers, and a cluster name when given. */
function readAs(dir: string, format: SourceFormat, clusterName?: string): Promise<SourceResult> {
  return readSource(dir, {
    scope: { kind: "RootSync" },
    kinds: fakeDiscovery(),
    format,
    ...(clusterName === undefined ? {} : { clusterName }),
  });
}

function codes(result: SourceResult): string[] {
  return result.errors.map((e) => e.code).sort();
}

void describe("the first stage checks every object, flawed ones too (as Config Sync's)", () => {
  void it("reports all of an object's problems: its reserved metadata, and its namespace against its directory", async () => {
    const result = await readAs(join(fixtures, "many-errors"), SourceFormat.Hierarchy);
    assert.deepEqual(codes(result), ["KNV1004", "KNV1009", "KNV1010", "KNV1011", "KNV1020", "KNV1043"]);
    const ofRoleBinding = result.errors
      .filter((e) => e.sourcePaths.includes("namespaces/apps/web/rolebinding.yaml"))
      .map((e) => e.code);
    assert.deepEqual(ofRoleBinding.sort(), ["KNV1009", "KNV1010", "KNV1011"]);
    assert.equal(result.complete, false, "nothing of a source with errors is applied");
  });

  void it("counts a Repo with an invalid name as the Repo: KNV1036 alone, no missing Repo (KNV1017)", async () => {
    const result = await readAs(join(fixtures, "errors", "knv1036-repo-name"), SourceFormat.Hierarchy);
    assert.deepEqual(codes(result), ["KNV1036"]);
  });

  void it("refuses a Sync (KNV1043, terminal) instead of waiting for its CRD (KNV1021)", async () => {
    const result = await readAs(join(fixtures, "errors", "knv1043-sync-kind"), SourceFormat.Hierarchy);
    assert.deepEqual(codes(result), ["KNV1043"]);
    assert.equal(result.errors[0]?.errorClass, ErrorClass.Terminal);
  });

  void it("refuses a Sync and a CRD of Config Sync's groups in an unstructured source, and a flawed Repo too", async () => {
    const result = await withTree(
      {
        "sync.yaml": "apiVersion: configmanagement.gke.io/v1\nkind: Sync\nmetadata: {name: s}\n",
        "crd.yaml":
          "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: rootsyncs.configsync.gke.io}\n" +
          "spec: {group: configsync.gke.io, names: {kind: RootSync, plural: rootsyncs}, scope: Namespaced, versions: []}\n",
        "repo.yaml":
          "apiVersion: configmanagement.gke.io/v1\nkind: Repo\nmetadata: {name: repo, labels: {configsync.gke.io/owner: team}}\nspec: {version: 1.0.0}\n",
      },
      (dir) => readAs(dir, SourceFormat.Unstructured),
    );
    assert.deepEqual(codes(result), ["KNV1011", "KNV1032", "KNV1043", "KNV1043"]);
  });

  void it("stops an unstructured source after its first stage, as nomos: a Sync is reported without the duplicates found later", async () => {
    const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: foo}\n";
    const result = await withTree(
      {
        "sync.yaml": "apiVersion: configmanagement.gke.io/v1\nkind: Sync\nmetadata: {name: s}\n",
        "a.yaml": configMap,
        "b.yaml": configMap,
      },
      (dir) => readAs(dir, SourceFormat.Unstructured),
    );
    assert.deepEqual(codes(result), ["KNV1043"]);
  });

  void it("stops an unstructured source on reserved metadata before cluster selection: no KNV1013 beside a KNV1011", async () => {
    const result = await withTree(
      {
        "a.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: foo, labels: {configmanagement.gke.io/x: v}}\n",
        "b.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: foo, annotations: {configmanagement.gke.io/cluster-selector: nope}}\n",
      },
      (dir) => readAs(dir, SourceFormat.Unstructured),
    );
    assert.deepEqual(codes(result), ["KNV1011"]);
  });

  void it("leaves the reconciler's per-cluster reading as it was: only the named cluster sees the collision", async () => {
    const dir = join(fixtures, "errors", "knv1029-cluster-specific-collision");
    assert.equal((await readAs(dir, SourceFormat.Hierarchy)).complete, true);
    assert.deepEqual(codes(await readAs(dir, SourceFormat.Hierarchy, "staging")), ["KNV1029"]);
  });
});

void describe("an unstructured source's later stages stop on the scope checks, as Config Sync's", () => {
  const clusterRoleInNamespace =
    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: cr, namespace: foo}\n";
  const selectedByMissing =
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {configmanagement.gke.io/namespace-selector: missing}}\n";
  const twice = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, namespace: x}\n";

  void it("a scope error (KNV1052) is reported without the unknown NamespaceSelector (KNV1013) or duplicates (KNV1029)", async () => {
    const result = await withTree(
      { "cr.yaml": clusterRoleInNamespace, "c.yaml": selectedByMissing, "d.yaml": `${twice}---\n${twice}` },
      (dir) => readAs(dir, SourceFormat.Unstructured),
    );
    assert.deepEqual(codes(result), ["KNV1052"]);
  });

  void it("an unknown NamespaceSelector (KNV1013) is reported without the duplicates (KNV1029)", async () => {
    const result = await withTree({ "c.yaml": selectedByMissing, "d.yaml": `${twice}---\n${twice}` }, (dir) =>
      readAs(dir, SourceFormat.Unstructured),
    );
    assert.deepEqual(codes(result), ["KNV1013"]);
  });

  void it("an unknown kind (KNV1021) stops no stage: it is reported beside the scope error", async () => {
    const widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: x}\n";
    const result = await withTree(
      { "cr.yaml": clusterRoleInNamespace, "w.yaml": widget, "c.yaml": selectedByMissing },
      (dir) => readAs(dir, SourceFormat.Unstructured),
    );
    assert.deepEqual(codes(result), ["KNV1021", "KNV1052"]);
  });
});
