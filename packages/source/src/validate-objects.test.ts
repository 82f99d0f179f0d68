import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorClass, SourceFormat } from "@driftless/api";
import { readSource } from "./read-source.ts";
import type { SourceResult } from "./result.ts";
import type { SyncScope } from "./scope.ts";
import { configMap, fakeDiscovery, withTree } from "./testing.ts";

const repoObject = `apiVersion: configmanagement.gke.io/v1
kind: Repo
metadata: {name: repo}
spec: {version: "1.0.0"}
`;
const namespace = (name: string, annotations = ""): string =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n${annotations ? `  annotations: {${annotations}}\n` : ""}`;
const unmanaged = "configmanagement.gke.io/managed: disabled";
const unmanagedConfigMap = (name: string, ns?: string): string =>
  configMap(name, ns).replace(`name: ${name}`, `name: ${name}\n  annotations: {${unmanaged}}`);
const crd = (name: string, spec: string, version = "v1"): string =>
  `apiVersion: apiextensions.k8s.io/${version}\nkind: CustomResourceDefinition\nmetadata: {name: ${name}}\n${spec}`;
const widgetSpec = `spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true}]
`;
const extensionsObject = (kind: string, name: string, ns?: string): string =>
  `apiVersion: extensions/v1beta1\nkind: ${kind}\nmetadata:\n  name: ${name}\n${ns ? `  namespace: ${ns}\n` : ""}spec: {}\n`;

const root: SyncScope = { kind: "RootSync" };

async function unstructured(files: Readonly<Record<string, string>>, scope: SyncScope = root): Promise<SourceResult> {
  return withTree(files, (dir) =>
    readSource(dir, { scope, kinds: fakeDiscovery(), format: SourceFormat.Unstructured }),
  );
}

async function hierarchy(files: Readonly<Record<string, string>>): Promise<SourceResult> {
  return withTree({ "system/repo.yaml": repoObject, ...files }, (dir) =>
    readSource(dir, { scope: root, kinds: fakeDiscovery(), format: SourceFormat.Hierarchy }),
  );
}

/** [code, first path] of each error, in order. */
function errorsOf(result: SourceResult): [string, string][] {
  assert.ok(!result.complete, "expected the source to fail");
  return result.errors.map((e) => [e.code, e.sourcePaths[0] ?? ""]);
}

function assertComplete(result: SourceResult): void {
  assert.ok(result.complete, result.errors.map((e) => `${e.code} ${e.message}`).join("\n"));
}

void describe("KNV1034: Config Sync's controller Namespaces may not be declared", () => {
  for (const name of ["config-management-system", "resource-group-system", "config-management-monitoring"]) {
    void it(`refuses the Namespace ${name} in an unstructured RootSync source, so the reconciler applies nothing`, async () => {
      const result = await unstructured({ "ns.yaml": namespace(name), "cm.yaml": configMap("kept", "default") });
      assert.deepEqual(errorsOf(result), [["KNV1034", "ns.yaml"]]);
      assert.equal(result.errors[0]?.errorClass, ErrorClass.Terminal);
      assert.match(
        result.errors[0]?.message ?? "",
        new RegExp(`^ns\\.yaml: Namespace "${name}": .*must not be declared`),
      );
    });

    void it(`refuses the Namespace ${name} in a hierarchy`, async () => {
      const path = `namespaces/${name}/namespace.yaml`;
      assert.deepEqual(errorsOf(await hierarchy({ [path]: namespace(name) })), [["KNV1034", path]]);
    });
  }

  void it("refuses it in a RepoSync's source before its scope is checked, as Config Sync does", async () => {
    const result = await unstructured(
      { "ns.yaml": namespace("config-management-system") },
      {
        kind: "RepoSync",
        namespace: "team-a",
      },
    );
    assert.deepEqual(errorsOf(result), [["KNV1034", "ns.yaml"]]);
  });

  void it("still allows objects in those namespaces, and other Namespaces", async () => {
    assertComplete(
      await unstructured({
        "cm.yaml": configMap("settings", "config-management-system"),
        "ns.yaml": namespace("team"),
      }),
    );
  });
});

void describe("KNV1050: kinds declared in the deprecated extensions group", () => {
  const moved: [string, string][] = [
    ["Deployment", "apps"],
    ["DaemonSet", "apps"],
    ["ReplicaSet", "apps"],
    ["StatefulSet", "apps"],
    ["Ingress", "networking.k8s.io"],
    ["NetworkPolicy", "networking.k8s.io"],
    ["PodSecurityPolicy", "policy"],
  ];
  for (const [kind, group] of moved) {
    void it(`refuses an extensions ${kind} in an unstructured source and names "${kind}.${group}" in Config Sync's words, alone (nothing later is reported)`, async () => {
      const result = await unstructured({ "obj.yaml": extensionsObject(kind, "x", "shop") });
      assert.deepEqual(errorsOf(result), [["KNV1050", "obj.yaml"]]);
      // Config Sync's CLI e2e test (cli_test.go) matches this sentence.
      const sentence = `The config is using a deprecated Group and Kind. To fix, set the Group and Kind to "${kind}.${group}"`;
      assert.ok(result.errors[0]?.message.startsWith(sentence), result.errors[0]?.message);
    });
  }

  void it("refuses it in a hierarchy", async () => {
    const result = await hierarchy({
      "namespaces/shop/namespace.yaml": namespace("shop"),
      "namespaces/shop/web.yaml": extensionsObject("Deployment", "web"),
    });
    assert.deepEqual(errorsOf(result), [["KNV1050", "namespaces/shop/web.yaml"]]);
  });

  void it("leaves other extensions kinds and the current groups alone", async () => {
    const result = await unstructured({
      "obj.yaml": extensionsObject("Widget", "x", "shop"),
      "web.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {}\n",
    });
    assert.deepEqual(errorsOf(result), [["KNV1021", "obj.yaml"]]);
  });
});

void describe("KNV1048: a CustomResourceDefinition must be named <spec.names.plural>.<spec.group>", () => {
  void it("refuses a CRD named after its kind instead of its plural, naming the expected name", async () => {
    const result = await unstructured({ "crd.yaml": crd("widget.example.com", widgetSpec) });
    assert.deepEqual(errorsOf(result), [["KNV1048", "crd.yaml"]]);
    assert.match(result.errors[0]?.message ?? "", /"widgets\.example\.com"/);
  });

  void it("refuses a CRD without a spec (the expected name is then '.')", async () => {
    assert.deepEqual(errorsOf(await unstructured({ "crd.yaml": crd("x", "") })), [["KNV1048", "crd.yaml"]]);
  });

  void it("checks v1beta1 CRDs too", async () => {
    const result = await unstructured({ "crd.yaml": crd("widget.example.com", widgetSpec, "v1beta1") });
    assert.deepEqual(errorsOf(result), [["KNV1048", "crd.yaml"]]);
  });

  void it("refuses it in a hierarchy", async () => {
    const result = await hierarchy({ "cluster/crd.yaml": crd("widget.example.com", widgetSpec) });
    assert.deepEqual(errorsOf(result), [["KNV1048", "cluster/crd.yaml"]]);
  });

  void it("accepts a correctly named CRD in both formats", async () => {
    assertComplete(await unstructured({ "crd.yaml": crd("widgets.example.com", widgetSpec) }));
    assertComplete(await hierarchy({ "cluster/crd.yaml": crd("widgets.example.com", widgetSpec) }));
  });
});

void describe("KNV1065: a CustomResourceDefinition that does not read as one", () => {
  const withVersion = (version: string): string =>
    widgetSpec.replace("versions: [{name: v1, served: true, storage: true}]", `versions: [${version}]`);
  const malformed: [string, string][] = [
    ["versions not a list", widgetSpec.replace(/versions: .*/, "versions: v1")],
    ["served a string", withVersion('{name: v1, served: "yes", storage: true}')],
    [
      "a schema type a number",
      withVersion(
        "{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {a: {type: 5}}}}}",
      ),
    ],
    [
      "required a string",
      withVersion("{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, required: spec}}}"),
    ],
    [
      "additionalProperties a number",
      withVersion(
        "{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, additionalProperties: 5}}}",
      ),
    ],
    [
      "a printer column's priority a fraction",
      withVersion(
        "{name: v1, served: true, storage: true, additionalPrinterColumns: [{name: A, type: string, jsonPath: .a, priority: 1.5}]}",
      ),
    ],
    [
      "the status subresource a boolean",
      withVersion("{name: v1, served: true, storage: true, subresources: {status: true}}"),
    ],
  ];
  for (const [why, spec] of malformed) {
    void it(`refuses a CRD with ${why}, once and alone, as Config Sync's typed read of every CRD does`, async () => {
      const result = await unstructured({ "crd.yaml": crd("widgets.example.com", spec) });
      assert.deepEqual(errorsOf(result), [["KNV1065", "crd.yaml"]]);
      assert.match(result.errors[0]?.message ?? "", /^malformed CustomResourceDefinition: spec\./);
      assert.equal(result.errors[0]?.errorClass, ErrorClass.Terminal);
    });
  }

  void it("reports a malformed CRD instead of its name (KNV1048) or its group (KNV1043), in a hierarchy too", async () => {
    const badName = await unstructured({ "crd.yaml": crd("widget.example.com", malformed[1]?.[1] ?? "") });
    assert.deepEqual(errorsOf(badName), [["KNV1065", "crd.yaml"]]);
    const ownGroup = (malformed[1]?.[1] ?? "").replace("group: example.com", "group: configsync.gke.io");
    assert.deepEqual(errorsOf(await unstructured({ "crd.yaml": crd("widgets.configsync.gke.io", ownGroup) })), [
      ["KNV1065", "crd.yaml"],
    ]);
    const tree = await hierarchy({ "cluster/crd.yaml": crd("widgets.example.com", malformed[0]?.[1] ?? "") });
    assert.deepEqual(errorsOf(tree), [["KNV1065", "cluster/crd.yaml"]]);
  });

  void it("accepts what the typed read accepts: unknown fields, null, items that are neither a schema nor a list, any enum value", async () => {
    const lenient = withVersion(
      "{name: v1, served: null, storage: true, extra: [1], schema: {openAPIV3Schema: {type: object, properties: {a: {type: array, items: 5}, b: {enum: [1, x, {c: d}]}, c: {additionalProperties: false, maximum: 2}}}}}",
    );
    assertComplete(await unstructured({ "crd.yaml": crd("widgets.example.com", lenient) }));
  });
});

void describe("KNV1056: managed objects in a Namespace declared unmanaged", () => {
  void it("refuses a managed object in it (unstructured), one error for the Namespace naming its managed objects", async () => {
    const result = await unstructured({
      "ns.yaml": namespace("shop", unmanaged),
      "a.yaml": configMap("a", "shop"),
      "b.yaml": configMap("b", "shop") + "---\n" + unmanagedConfigMap("c", "shop"),
      "other.yaml": configMap("elsewhere", "default"),
    });
    assert.deepEqual(errorsOf(result), [["KNV1056", "a.yaml"]]);
    const [error] = result.errors;
    assert.deepEqual(
      error?.resources.map((r) => `${r.namespace ?? ""}/${r.name}`),
      ["shop/a", "shop/b"],
      "only the managed objects are named",
    );
    assert.match(error?.message ?? "", /Namespace "shop"/);
  });

  void it("refuses a managed object in it (hierarchy), inherited ones too", async () => {
    const result = await hierarchy({
      "namespaces/eng/everywhere.yaml": configMap("everywhere"),
      "namespaces/eng/shop/namespace.yaml": namespace("shop", unmanaged),
      "namespaces/eng/web/namespace.yaml": namespace("web"),
    });
    assert.deepEqual(errorsOf(result), [["KNV1056", "namespaces/eng/everywhere.yaml"]]);
    assert.deepEqual(
      result.errors[0]?.resources.map((r) => `${r.namespace ?? ""}/${r.name}`),
      ["shop/everywhere"],
    );
  });

  void it("accepts objects that are unmanaged themselves, and a managed Namespace's objects", async () => {
    assertComplete(
      await unstructured({
        "ns.yaml": namespace("shop", unmanaged),
        "a.yaml": unmanagedConfigMap("a", "shop"),
        "team.yaml": namespace("team") + "---\n" + configMap("b", "team"),
      }),
    );
    assertComplete(
      await hierarchy({
        "namespaces/shop/namespace.yaml": namespace("shop", unmanaged),
        "namespaces/shop/a.yaml": unmanagedConfigMap("a"),
      }),
    );
  });

  void it("ignores a namespace the source does not declare unmanaged (declared elsewhere or not at all)", async () => {
    assertComplete(await unstructured({ "a.yaml": configMap("a", "shop") }));
  });
});
