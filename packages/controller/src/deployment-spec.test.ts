import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSync, type RSync } from "@driftless/api";
import { podTemplateHash, reconcilerDeployment } from "./deployment-spec.ts";
import { RenderContainer, renderResources } from "./render-container.ts";

function rootSync(override: Record<string, unknown> = {}, generation = 1): RSync {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system", generation },
    spec: { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", auth: "none" }, override },
  });
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.value;
}

const settings = { image: "driftless:test", redisUrl: "redis://redis:6379", queuePrefix: undefined, logLevel: "info" };

interface Container {
  name: string;
  command: string[];
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
}
interface Deployment {
  metadata: { labels: Record<string, string> };
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } };
  };
}

function deploymentOf(sync: RSync): Deployment {
  return reconcilerDeployment(sync, settings) as unknown as Deployment;
}

function reconcilerOf(sync: RSync): Container {
  const found = deploymentOf(sync).spec.template.spec.containers.find((c) => c.name === "reconciler");
  assert.ok(found);
  return found;
}

void describe("reconcilerDeployment: resources", () => {
  void it("raises driftless's default memory limit to a larger request, and sizes the heap to it", () => {
    const reconciler = reconcilerOf(rootSync({ resources: [{ containerName: "reconciler", memoryRequest: "1Gi" }] }));
    assert.deepEqual(reconciler.resources, { requests: { cpu: "50m", memory: "1Gi" }, limits: { memory: "1Gi" } });
    assert.ok(reconciler.command.includes("--max-old-space-size=768"), reconciler.command.join(" "));
  });

  void it("raises it to the sum of the entries landing on the reconciler", () => {
    const sync = rootSync({
      resources: [
        { containerName: "reconciler", memoryRequest: "400Mi" },
        { containerName: "git-sync", memoryRequest: "200Mi" },
      ],
    });
    assert.deepEqual(reconcilerOf(sync).resources.limits, { memory: "600Mi" });
  });

  void it("keeps the default limit when the request is below it, and a limit the user wrote as written", () => {
    assert.deepEqual(reconcilerOf(rootSync()).resources.limits, { memory: "512Mi" });
    const written = rootSync({
      resources: [{ containerName: "reconciler", memoryRequest: "1Gi", memoryLimit: "768Mi" }],
    });
    assert.deepEqual(reconcilerOf(written).resources.limits, { memory: "768Mi" });
  });

  void it("raises the render container's default limit too", () => {
    const sync = rootSync({ resources: [{ containerName: RenderContainer, memoryRequest: "512Mi" }] });
    assert.deepEqual(renderResources(sync), { requests: { cpu: "10m", memory: "512Mi" }, limits: { memory: "512Mi" } });
  });
});

void describe("reconcilerDeployment: Config Sync's labels", () => {
  void it("labels the Deployment and its pods app: reconciler and the sync's generation, outside the selector", () => {
    const deployment = deploymentOf(rootSync({}, 7));
    for (const labels of [deployment.metadata.labels, deployment.spec.template.metadata.labels]) {
      assert.equal(labels["app"], "reconciler");
      assert.equal(labels["configsync.gke.io/sync-generation"], "7");
    }
    // The selector of an existing Deployment cannot change.
    assert.deepEqual(deployment.spec.selector.matchLabels, { "configsync.gke.io/reconciler": "root-reconciler" });
  });

  void it("rolls the pod on a new generation, as Config Sync's pods do", () => {
    const [first, next] = [rootSync({}, 1), rootSync({}, 2)].map((s) => deploymentOf(s).spec.template.metadata);
    assert.equal(first?.labels["configsync.gke.io/sync-generation"], "1");
    assert.equal(next?.labels["configsync.gke.io/sync-generation"], "2");
    assert.notEqual(podTemplateHash(rootSync({}, 1), settings), podTemplateHash(rootSync({}, 2), settings));
  });
});
