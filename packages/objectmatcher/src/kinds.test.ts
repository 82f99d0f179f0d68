import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PATCH_CONTENT_TYPE, builtInGroupKinds, resolveKind } from "./kinds.ts";
import { childSchema } from "./schema.ts";
import type { FieldSchema } from "./schema.ts";

function schemaAt(apiVersion: string, kind: string, path: string): FieldSchema | undefined {
  let schema: FieldSchema | undefined = resolveKind(apiVersion, kind).schema;
  for (const segment of path.split(".")) schema = segment === "[]" ? schema?.items : childSchema(schema, segment);
  return schema;
}

describe("built-in kinds", () => {
  it("uses strategic merge for built-in kinds and JSON merge for everything else", () => {
    for (const [apiVersion, kind] of [
      ["v1", "Service"],
      ["apps/v1", "Deployment"],
      ["batch/v1", "CronJob"],
      ["rbac.authorization.k8s.io/v1", "ClusterRole"],
      ["networking.k8s.io/v1", "NetworkPolicy"],
      ["policy/v1", "PodDisruptionBudget"],
    ] as const) {
      assert.equal(resolveKind(apiVersion, kind).patchType, "strategic-merge", kind);
    }
    assert.equal(resolveKind("cert-manager.io/v1", "Certificate").patchType, "merge");
    assert.equal(resolveKind("v1", "NotAKind").patchType, "merge");
    assert.equal(PATCH_CONTENT_TYPE["strategic-merge"], "application/strategic-merge-patch+json");
    assert.ok(builtInGroupKinds().includes("apps/StatefulSet"));
  });

  it("knows the Kubernetes merge keys", () => {
    const expected: [string, string, string, readonly string[]][] = [
      ["apps/v1", "Deployment", "spec.template.spec.containers", ["name"]],
      ["apps/v1", "Deployment", "spec.template.spec.initContainers", ["name"]],
      ["v1", "Pod", "spec.ephemeralContainers", ["name"]],
      ["v1", "Pod", "spec.containers.[].ports", ["containerPort", "protocol"]],
      ["v1", "Pod", "spec.containers.[].env", ["name"]],
      ["v1", "Pod", "spec.containers.[].volumeMounts", ["mountPath"]],
      ["v1", "Pod", "spec.volumes", ["name"]],
      ["v1", "Pod", "spec.imagePullSecrets", ["name"]],
      ["v1", "Pod", "spec.hostAliases", ["ip"]],
      ["v1", "Pod", "spec.topologySpreadConstraints", ["topologyKey", "whenUnsatisfiable"]],
      ["v1", "Service", "spec.ports", ["port", "protocol"]],
      ["v1", "ConfigMap", "metadata.ownerReferences", ["uid"]],
      ["batch/v1", "CronJob", "spec.jobTemplate.spec.template.spec.containers", ["name"]],
      ["admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "webhooks", ["name"]],
    ];
    for (const [apiVersion, kind, path, keys] of expected) {
      const schema = schemaAt(apiVersion, kind, path);
      assert.equal(schema?.list, "map", `${kind} ${path}`);
      assert.deepEqual(schema?.keys, keys, `${kind} ${path}`);
    }
  });

  it("compares lists without a merge key whole", () => {
    for (const [apiVersion, kind, path] of [
      ["v1", "Pod", "spec.tolerations"],
      ["v1", "Pod", "spec.containers.[].command"],
      ["v1", "Pod", "spec.containers.[].args"],
      ["rbac.authorization.k8s.io/v1", "ClusterRole", "rules"],
      ["apps/v1", "StatefulSet", "spec.volumeClaimTemplates"],
    ] as const) {
      assert.equal(schemaAt(apiVersion, kind, path)?.list, undefined, `${kind} ${path}`);
    }
    assert.equal(schemaAt("v1", "Pod", "metadata.finalizers")?.list, "set");
  });
});
