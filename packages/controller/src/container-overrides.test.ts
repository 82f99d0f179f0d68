import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSync, type RSync } from "@driftless/api";
import { reconcilerDeployment } from "./deployment-spec.ts";

function rootSync(override: Record<string, unknown>): RSync {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    // Its reconciler found a kustomization: the pod has the render container these tests look at.
    metadata: {
      name: "root-sync",
      namespace: "config-management-system",
      annotations: { "configsync.gke.io/requires-rendering": "true" },
    },
    spec: { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", auth: "none" }, override },
  });
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.value;
}

interface Container {
  name: string;
  env?: { name: string; value?: string }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

function containers(sync: RSync): Map<string, Container> {
  const deployment = reconcilerDeployment(sync, {
    image: "driftless:test",
    redisUrl: "redis://redis:6379",
    queuePrefix: undefined,
    logLevel: "info",
  }) as unknown as { spec: { template: { spec: { containers: Container[] } } } };
  return new Map(deployment.spec.template.spec.containers.map((c) => [c.name, c]));
}

const logLevel = (c: Container | undefined): string | undefined => c?.env?.find((e) => e.name === "LOG_LEVEL")?.value;

void describe("Config Sync's container overrides in a reconciler Deployment", () => {
  void it("adds git-sync's, oci-sync's and otel-agent's resources to the reconciler's, which does their work", () => {
    const pod = containers(
      rootSync({
        resources: [
          { containerName: "reconciler", cpuRequest: "200m", memoryRequest: "256Mi", memoryLimit: "1Gi" },
          { containerName: "git-sync", cpuRequest: "100m", memoryRequest: "256Mi", memoryLimit: "512Mi" },
          { containerName: "otel-agent", cpuRequest: "0.5", cpuLimit: "1" },
        ],
      }),
    );
    assert.deepEqual(pod.get("reconciler")?.resources, {
      requests: { cpu: "800m", memory: "512Mi" },
      limits: { memory: "1536Mi", cpu: "1" },
    });
  });

  void it("adds a fetcher's request to the reconciler's default when the reconciler has no entry of its own", () => {
    const pod = containers(rootSync({ resources: [{ containerName: "helm-sync", memoryRequest: "64Mi" }] }));
    assert.equal(pod.get("reconciler")?.resources?.requests?.["memory"], "192Mi");
  });

  void it("gives hydration-controller's resources and log level to the render container, and a fetcher's log level to the reconciler", () => {
    const pod = containers(
      rootSync({
        resources: [{ containerName: "hydration-controller", memoryLimit: "1Gi", cpuRequest: "50m" }],
        logLevels: [
          { containerName: "hydration-controller", logLevel: 5 },
          { containerName: "git-sync", logLevel: 6 },
        ],
      }),
    );
    const render = pod.get("hydration-controller");
    assert.equal(render?.resources?.limits?.["memory"], "1Gi");
    assert.equal(render?.resources?.requests?.["cpu"], "50m");
    assert.equal(logLevel(render), "debug");
    assert.equal(logLevel(pod.get("reconciler")), "debug");
  });

  void it("keeps the render container at the reconciler's level when hydration-controller has no entry", () => {
    const pod = containers(rootSync({ logLevels: [{ containerName: "reconciler", logLevel: 0 }] }));
    assert.equal(logLevel(pod.get("hydration-controller")), "info");
  });
});
