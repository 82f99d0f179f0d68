import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expandDocuments } from "./expand.ts";
import { parseManifestText } from "./parse.ts";

function expand(text: string, path = "list.yaml") {
  return expandDocuments(parseManifestText(text, path).documents, path);
}

void describe("expandDocuments", () => {
  void it("flattens a v1 List into its items, keeping where each came from", () => {
    const text = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
`;
    const { objects, errors } = expand(text);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      objects.map((o) => [(o.value["metadata"] as { name: string }).name, o.location]),
      [
        ["a", "items[0]"],
        ["b", "items[1]"],
      ],
    );
  });

  void it("flattens typed lists (ConfigMapList) and nested lists, in JSON too", () => {
    const json = JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMapList",
      items: [
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } },
        { apiVersion: "v1", kind: "List", items: [{ apiVersion: "v1", kind: "Secret", metadata: { name: "b" } }] },
      ],
    });
    const { objects } = expand(json, "list.json");
    assert.deepEqual(
      objects.map((o) => [o.value["kind"], o.location]),
      [
        ["ConfigMap", "items[0]"],
        ["Secret", "items[1], items[0]"],
      ],
    );
  });

  void it("keeps an object whose kind is not a list even if it has an items field", () => {
    const { objects } = expand("apiVersion: example.com/v1\nkind: Cart\nmetadata: {name: c}\nitems: [1, 2]\n");
    assert.equal(objects.length, 1);
    assert.equal(objects[0]?.value["kind"], "Cart");
  });

  void it("reports list items that are not objects", () => {
    const { objects, errors } = expand("apiVersion: v1\nkind: List\nitems:\n- just a string\n");
    assert.equal(objects.length, 0);
    assert.equal(errors[0]?.code, "KNV1006");
    assert.match(
      errors[0]?.message ?? "",
      /^list\.yaml \(items\[0\]\): expected a Kubernetes object in the List, found a string/,
    );
  });

  void it('drops local-config objects (any value but "false"), before validation, and counts them', () => {
    const text = `apiVersion: fn.kpt.dev/v1alpha1
kind: SetLabels
metadata:
  annotations: {config.kubernetes.io/local-config: "true"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kept, annotations: {config.kubernetes.io/local-config: "false"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: local, annotations: {config.kubernetes.io/local-config: "yes please"}}
`;
    const { objects, localConfigSkipped } = expand(text);
    assert.equal(localConfigSkipped, 2);
    assert.deepEqual(
      objects.map((o) => (o.value["metadata"] as { name: string }).name),
      ["kept"],
    );
  });

  void it("drops a whole local-config List but keeps local-config items of a List, as Config Sync does", () => {
    const text = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, annotations: {config.kubernetes.io/local-config: "true"}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
---
apiVersion: v1
kind: List
metadata: {annotations: {config.kubernetes.io/local-config: "true"}}
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
`;
    const { objects, localConfigSkipped } = expand(text);
    // Config Sync filters local-config on the documents of a file only, never on List items.
    assert.equal(localConfigSkipped, 1);
    assert.deepEqual(
      objects.map((o) => (o.value["metadata"] as { name: string }).name),
      ["a", "b"],
    );
  });

  void it("keeps a local-config List nested in a List, and its items", () => {
    const text = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: List
  metadata: {annotations: {config.kubernetes.io/local-config: "true"}}
  items:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a, annotations: {config.kubernetes.io/local-config: "true"}}}
`;
    const { objects, localConfigSkipped } = expand(text);
    assert.equal(localConfigSkipped, 0);
    assert.equal(objects.length, 1);
  });
});
