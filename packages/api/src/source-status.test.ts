import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRootSync } from "./parse-sync.ts";
import { sourceStatusBlock } from "./source-status.ts";
import type { RSync } from "./sync-types.ts";

function rootSync(spec: Record<string, unknown>): RSync {
  const result = parseRootSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system" },
    spec,
  });
  assert.ok(result.ok);
  return result.value;
}

void describe("sourceStatusBlock", () => {
  void it("writes spec.helm.version as written, a range included, and latest when unset (Config Sync's helm-sync revision)", () => {
    const helm = { repo: "https://charts.example/stable", chart: "web" };
    assert.deepEqual(sourceStatusBlock(rootSync({ sourceType: "helm", helm: { ...helm, version: "^1.0.0" } })), {
      helmStatus: { repo: "https://charts.example/stable", chart: "web", version: "^1.0.0" },
    });
    assert.deepEqual(sourceStatusBlock(rootSync({ sourceType: "helm", helm })), {
      helmStatus: { repo: "https://charts.example/stable", chart: "web", version: "latest" },
    });
  });

  void it("writes spec.oci's image and dir", () => {
    assert.deepEqual(
      sourceStatusBlock(rootSync({ sourceType: "oci", oci: { image: "r.example/c:v1", dir: "config" } })),
      {
        ociStatus: { image: "r.example/c:v1", dir: "config" },
      },
    );
  });
});
