import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { allowsEmptySource, deletionPropagationPolicyOf, isLocalConfig } from "./annotations.ts";

void describe("sync annotations", () => {
  void it("defaults deletion propagation to Orphan unless Foreground is asked for", () => {
    assert.equal(deletionPropagationPolicyOf(undefined), "Orphan");
    assert.equal(
      deletionPropagationPolicyOf({ "configsync.gke.io/deletion-propagation-policy": "Foreground" }),
      "Foreground",
    );
    assert.equal(
      deletionPropagationPolicyOf({ "configsync.gke.io/deletion-propagation-policy": "foreground" }),
      "Orphan",
    );
  });

  void it('allows an empty source only when explicitly set to "true"', () => {
    assert.ok(allowsEmptySource({ "configsync.gke.io/allow-empty-source": "true" }));
    assert.ok(!allowsEmptySource({ "configsync.gke.io/allow-empty-source": "yes" }));
    assert.ok(!allowsEmptySource(undefined));
  });
});

void describe("isLocalConfig", () => {
  void it('treats any value but "false" as local, like Config Sync', () => {
    assert.ok(isLocalConfig({ "config.kubernetes.io/local-config": "true" }));
    assert.ok(isLocalConfig({ "config.kubernetes.io/local-config": "" }));
    assert.ok(!isLocalConfig({ "config.kubernetes.io/local-config": "false" }));
    assert.ok(!isLocalConfig({}));
  });
});
