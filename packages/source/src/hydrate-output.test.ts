import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "yaml";
import { hydratedObject, toYamlStream } from "./hydrate-output.ts";
import { readSource } from "./read-source.ts";
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
