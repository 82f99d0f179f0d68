import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SourceFormat } from "@driftless/api";
import { builtinKinds } from "./builtin-kinds.ts";
import { readSource } from "./read-source.ts";
import type { SourceResult } from "./result.ts";
import { fakeDiscovery, withTree } from "./testing.ts";

const repo = `apiVersion: configmanagement.gke.io/v1\nkind: Repo\nmetadata: {name: repo}\nspec: {version: "1.0.0"}\n`;
const selector = (name: string): string =>
  `apiVersion: configmanagement.gke.io/v1\nkind: NamespaceSelector\nmetadata: {name: ${name}}\nspec: {selector: {matchLabels: {env: prod}}}\n`;
const namespace = (name: string, selectorName?: string): string =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n  labels: {env: prod}\n` +
  (selectorName !== undefined ? `  annotations: {configmanagement.gke.io/namespace-selector: ${selectorName}}\n` : "");

async function hierarchy(files: Readonly<Record<string, string>>, offline: boolean): Promise<SourceResult> {
  return withTree({ "system/repo.yaml": repo, ...files }, (dir) =>
    readSource(dir, {
      scope: { kind: "RootSync" },
      format: SourceFormat.Hierarchy,
      ...(offline ? { kinds: builtinKinds, allowUnknownKinds: true } : { kinds: fakeDiscovery() }),
    }),
  );
}
const errors = (result: SourceResult): string[] => result.errors.map((e) => `${e.code} ${e.resources[0]?.name}`);

void describe("NamespaceSelectors on Namespaces, hierarchy", () => {
  void it("refuses a namespace-selected Namespace (KNV1004), offline and with discovery", async () => {
    const files = { "namespaces/abs/sel.yaml": selector("prod"), "namespaces/abs/a/ns.yaml": namespace("a", "prod") };
    for (const offline of [true, false]) {
      const result = await hierarchy(files, offline);
      assert.deepEqual(errors(result), ["KNV1004 a"], `offline: ${offline}`);
      assert.match(
        result.errors[0]?.message ?? "",
        /namespaces\/abs\/a\/ns\.yaml: Namespace "a": cluster-scoped objects may not be namespace-selected/,
      );
    }
  });

  void it("reports only KNV1004 when the selector is unknown or out of reach", async () => {
    const unknown = { "namespaces/abs/sel.yaml": selector("prod"), "namespaces/abs/a/ns.yaml": namespace("a", "nope") };
    assert.deepEqual(errors(await hierarchy(unknown, true)), ["KNV1004 a"]);
    const elsewhere = {
      "namespaces/ops/sel.yaml": selector("prod"),
      "namespaces/ops/b/ns.yaml": namespace("b"),
      "namespaces/abs/a/ns.yaml": namespace("a", "prod"),
    };
    assert.deepEqual(errors(await hierarchy(elsewhere, true)), ["KNV1004 a"]);
  });

  void it("still keeps a Namespace without the annotation", async () => {
    const files = { "namespaces/abs/sel.yaml": selector("prod"), "namespaces/abs/a/ns.yaml": namespace("a") };
    const result = await hierarchy(files, true);
    assert.ok(result.complete, errors(result).join());
    assert.deepEqual(
      result.objects.map((o) => `${o.kind} ${o.id.name}`),
      ["Namespace a"],
    );
  });
});
