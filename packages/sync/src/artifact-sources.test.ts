import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidSyncError, parseSync, type RSync } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import { valuesFile } from "./artifact-sources.ts";

function helmSync(kind: "RootSync" | "RepoSync", namespace: string): RSync {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind,
    metadata: { name: "helm", namespace },
    spec: { sourceType: "helm", helm: { repo: "https://charts.example", chart: "web", auth: "none" } },
  });
  assert.ok(parsed.ok);
  return parsed.value;
}

function configMap(immutable: boolean | undefined, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "values", namespace: "ns" },
    ...(immutable === undefined ? {} : { immutable }),
    data,
  };
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof InvalidSyncError, String(error));
    assert.equal(error.errorClass, "terminal");
    return `${error.code}: ${error.message}`;
  }
  assert.fail("not refused");
}

test("a values ConfigMap that is missing, mutable or without the data key is refused in Config Sync's words (KNV1061)", () => {
  const root = helmSync("RootSync", "config-management-system");
  const ref = { name: "values" };
  assert.equal(
    refusal(() => valuesFile(root, ref, undefined)),
    'KNV1061: RootSyncs must reference valid ConfigMaps in spec.helm.valuesFileRefs: ConfigMap "values" not found',
  );
  for (const immutable of [undefined, false])
    assert.equal(
      refusal(() => valuesFile(root, ref, configMap(immutable, { "values.yaml": "a: 1" }))),
      'KNV1061: RootSyncs must reference valid ConfigMaps in spec.helm.valuesFileRefs: ConfigMap "values" in namespace "config-management-system" is not immutable',
    );
  const repo = helmSync("RepoSync", "shop");
  assert.equal(
    refusal(() => valuesFile(repo, { name: "values", dataKey: "foo.yaml" }, configMap(true, { "values.yaml": "" }))),
    'KNV1061: RepoSyncs must reference valid ConfigMaps in spec.helm.valuesFileRefs: ConfigMap "values" in namespace "shop" does not have data key "foo.yaml"',
  );
});

test("a values file is read from the data key, values.yaml when none is named", () => {
  const sync = helmSync("RepoSync", "shop");
  const values = configMap(true, { "values.yaml": "a: 1", "prod.yaml": "a: 2" });
  assert.equal(valuesFile(sync, { name: "values" }, values), "a: 1");
  assert.equal(valuesFile(sync, { name: "values", dataKey: "prod.yaml" }, values), "a: 2");
});
