import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { kindKey, kindsFromCrds } from "./kinds.ts";
import { toManifest } from "./manifest.ts";
import type { Manifest } from "./manifest.ts";
import { parseManifestText } from "./parse.ts";

function manifests(text: string): Manifest[] {
  return parseManifestText(text, "crds.yaml").documents.map((d) => {
    const checked = toManifest(d.value, "crds.yaml", d.location);
    assert.ok(checked.ok);
    return checked.manifest;
  });
}

void describe("kindsFromCrds", () => {
  void it("indexes every served version of a v1 CRD, and the single version of a v1beta1 CRD", () => {
    const kinds = kindsFromCrds(
      manifests(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - {name: v1, served: true}
  - {name: v2alpha1, served: false}
  - {name: v1beta1}
---
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  version: v1
  scope: Cluster
  names: {kind: Gadget, plural: gadgets}
`),
    );
    assert.deepEqual(kinds.get(kindKey("example.com/v1", "Widget")), {
      group: "example.com",
      version: "v1",
      resource: "widgets",
      namespaced: true,
    });
    assert.ok(kinds.has(kindKey("example.com/v1beta1", "Widget")));
    assert.ok(!kinds.has(kindKey("example.com/v2alpha1", "Widget")));
    assert.equal(kinds.get(kindKey("example.com/v1", "Gadget"))?.namespaced, false);
    assert.equal(kinds.size, 3);
  });

  void it("skips CRDs it cannot read, leaving their kinds to discovery", () => {
    const kinds = kindsFromCrds(
      manifests(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: broken.example.com}
spec: {group: example.com, names: {kind: Broken}, versions: [{name: v1}]}
`),
    );
    assert.equal(kinds.size, 0);
  });
});
