import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KnvCode } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import { validateSync } from "./validate.ts";

function rootSync(override: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system" },
    spec: { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", auth: "none" }, override },
  };
}

const options = { allowFileRepos: false };

function messagesOf(override: Record<string, unknown>): string[] {
  const result = validateSync(rootSync(override), options);
  if (result.ok) return [];
  for (const error of result.errors) assert.equal(error.code, KnvCode.InvalidSync);
  return result.errors.map((e) => e.message);
}

void describe("validateSync: requests above limits once the entries of one container add up", () => {
  void it("refuses entries whose sum on the reconciler container exceeds its limits, naming the container and each resource", () => {
    const messages = messagesOf({
      resources: [
        {
          containerName: "reconciler",
          cpuRequest: "100m",
          cpuLimit: "200m",
          memoryRequest: "256Mi",
          memoryLimit: "512Mi",
        },
        { containerName: "git-sync", cpuRequest: "150m", memoryRequest: "300Mi" },
      ],
    });
    assert.equal(messages.length, 2, messages.join("\n"));
    const cpu = messages.find((m) => m.includes(" cpu "));
    const memory = messages.find((m) => m.includes(" memory "));
    assert.ok(cpu !== undefined && memory !== undefined, messages.join("\n"));
    assert.match(cpu, /reconciler container/);
    assert.match(cpu, /250m/);
    assert.match(cpu, /200m/);
    assert.match(memory, /556Mi/);
    assert.match(memory, /512Mi/);
    assert.match(memory, /git-sync/, "the message names the entries that add up");
  });

  void it("refuses a lone limit under the container's default request", () => {
    const messages = messagesOf({ resources: [{ containerName: "reconciler", memoryLimit: "100Mi" }] });
    assert.equal(messages.length, 1, messages.join("\n"));
    assert.match(messages[0] ?? "", /reconciler container's memory request 128Mi exceeds its limit 100Mi/);
  });

  void it("checks the render container too", () => {
    const messages = messagesOf({ resources: [{ containerName: "hydration-controller", memoryLimit: "32Mi" }] });
    assert.equal(messages.length, 1, messages.join("\n"));
    assert.match(messages[0] ?? "", /hydration-controller container's memory request 64Mi exceeds its limit 32Mi/);
  });

  void it("accepts requests equal to or below their limits, in any notation, and resources without a limit", () => {
    assert.deepEqual(
      messagesOf({
        resources: [
          {
            containerName: "reconciler",
            cpuRequest: "0.2",
            cpuLimit: "200m",
            memoryRequest: "1Gi",
            memoryLimit: "1024Mi",
          },
          { containerName: "otel-agent", cpuRequest: "1" },
        ],
      }).filter((m) => !m.includes("memory")),
      [
        "spec.override.resources: the reconciler container's cpu request 1200m exceeds its limit 200m (the entries for reconciler and otel-agent add up on it)",
      ],
    );
    assert.deepEqual(
      messagesOf({
        resources: [
          { containerName: "reconciler", cpuRequest: "200m", memoryRequest: "256Mi", memoryLimit: "1Gi" },
          { containerName: "git-sync", cpuRequest: "100m", memoryRequest: "256Mi", memoryLimit: "512Mi" },
          { containerName: "otel-agent", cpuRequest: "0.5", cpuLimit: "1" },
        ],
      }),
      [],
    );
    assert.deepEqual(messagesOf({ resources: [{ containerName: "reconciler", cpuRequest: "4" }] }), []);
  });

  void it("accepts a request above driftless's own default limit, as Config Sync (whose containers have no limit) does", () => {
    assert.deepEqual(messagesOf({ resources: [{ containerName: "reconciler", memoryRequest: "1Gi" }] }), []);
    assert.deepEqual(messagesOf({ resources: [{ containerName: "git-sync", memoryRequest: "600Mi" }] }), []);
    assert.deepEqual(messagesOf({ resources: [{ containerName: "hydration-controller", memoryRequest: "1Gi" }] }), []);
    // A limit the user wrote is theirs: a request above it is still refused.
    assert.deepEqual(
      messagesOf({ resources: [{ containerName: "reconciler", memoryRequest: "1Gi", memoryLimit: "512Mi" }] }),
      ["spec.override.resources: the reconciler container's memory request 1Gi exceeds its limit 512Mi"],
    );
    assert.deepEqual(messagesOf({}), []);
  });
});
