import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "yaml";
import { hydratedObject, toYamlStream } from "./hydrate-output.ts";
import { readSource } from "./read-source.ts";
import { yamlOptions } from "./yaml-options.ts";
import { fakeDiscovery, withTree } from "./testing.ts";

test("hydrate writes data keys named like Object.prototype members (__proto__, toString) as keys", async () => {
  const yaml = await withTree(
    {
      "cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: odd, namespace: shop}
data: {plain: a, toString: b, __proto__: c}
`,
    },
    async (dir) => {
      const source = await readSource(dir, { scope: { kind: "RootSync" }, kinds: fakeDiscovery() });
      assert.ok(source.complete, JSON.stringify(source.errors));
      return toYamlStream(source.objects.map(hydratedObject));
    },
  );
  const written = parse(yaml) as { data: Record<string, string> };
  assert.deepEqual(Object.entries(written.data).sort(), [
    ["__proto__", "c"],
    ["plain", "a"],
    ["toString", "b"],
  ]);
});

test("hydrate quotes a string go-yaml v2 would read as a number, so the written file reads back as it was declared", () => {
  // Go's ParseInt takes 0X, 0O, 0B and a sign before them, and go-yaml drops every `_` first: YAML 1.1's
  // own patterns left these plain, and kubectl or Config Sync would read ConfigMap data as numbers.
  const data = { hex: "0X1F", octal: "0O17", binary: "0B101", negative: "-0o17", underscored: "1e1_0", plain: "0o1x" };
  const written = toYamlStream([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data }]);
  assert.deepEqual((parse(written, yamlOptions) as { data: unknown }).data, data);
});
