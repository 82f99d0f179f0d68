import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSync, type RSync } from "@driftless/api";
import { reconcilerDeployment } from "./deployment-spec.ts";
import { overrideArgs, reconcilerOverrides } from "./reconciler-overrides.ts";

function rootSync(override: Record<string, unknown>): RSync {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system" },
    spec: { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", auth: "none" }, override },
  });
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.value;
}

void describe("reconcilerOverrides", () => {
  void it("passes override.apiServerTimeout on as a flag and as API_SERVER_TIMEOUT", () => {
    const sync = rootSync({ apiServerTimeout: "7s" });
    assert.deepEqual(overrideArgs(reconcilerOverrides(sync)), ["--api-server-timeout", "7s"]);
    const env = envOf(
      reconcilerDeployment(sync, { image: "i", redisUrl: "redis://r:6379", queuePrefix: undefined, logLevel: "info" }),
    );
    assert.equal(env.get("API_SERVER_TIMEOUT"), "7s");
  });

  void it("passes no apiServerTimeout for a zero one: Config Sync reads 0s as its 15 s default, and the reconciler refuses a 0 s deadline", () => {
    for (const zero of ["0s", "0"]) {
      const sync = rootSync({ apiServerTimeout: zero });
      assert.deepEqual(overrideArgs(reconcilerOverrides(sync)), []);
      const env = envOf(
        reconcilerDeployment(sync, {
          image: "i",
          redisUrl: "redis://r:6379",
          queuePrefix: undefined,
          logLevel: "info",
        }),
      );
      assert.equal(env.get("API_SERVER_TIMEOUT"), undefined);
    }
  });

  void it("maps the reconciler container's klog verbosity to a log level: 4 and above is debug", () => {
    assert.equal(
      reconcilerOverrides(rootSync({ logLevels: [{ containerName: "reconciler", logLevel: 5 }] })).logLevel,
      "debug",
    );
    assert.equal(
      reconcilerOverrides(rootSync({ logLevels: [{ containerName: "reconciler", logLevel: 0 }] })).logLevel,
      "info",
    );
    // git runs inside the reconciler: git-sync's level is the reconciler's (container-overrides.ts).
    assert.deepEqual(reconcilerOverrides(rootSync({ logLevels: [{ containerName: "git-sync", logLevel: 9 }] })), {
      logLevel: "debug",
    });
    const sync = rootSync({ logLevels: [{ containerName: "reconciler", logLevel: 6 }] });
    const env = envOf(
      reconcilerDeployment(sync, { image: "i", redisUrl: "redis://r:6379", queuePrefix: undefined, logLevel: "warn" }),
    );
    assert.equal(env.get("LOG_LEVEL"), "debug");
  });

  void it("leaves the defaults alone when nothing is overridden", () => {
    const sync = rootSync({});
    assert.deepEqual(reconcilerOverrides(sync), {});
    const env = envOf(
      reconcilerDeployment(sync, { image: "i", redisUrl: "redis://r:6379", queuePrefix: undefined, logLevel: "warn" }),
    );
    assert.equal(env.get("LOG_LEVEL"), "warn");
    assert.equal(env.has("API_SERVER_TIMEOUT"), false);
  });
});

void describe("override.resources", () => {
  void it("sizes the reconciler container and its heap, git-sync's share added (git runs inside it)", () => {
    const sync = rootSync({
      resources: [
        { containerName: "reconciler", cpuRequest: "250m", memoryRequest: "256Mi", memoryLimit: "2Gi" },
        { containerName: "git-sync", memoryLimit: "64Mi" },
      ],
    });
    const deployment = reconcilerDeployment(sync, settings("info"));
    const container = containerOf(deployment);
    assert.deepEqual(container.resources, {
      requests: { cpu: "250m", memory: "256Mi" },
      limits: { memory: "2112Mi" },
    });
    assert.ok(container.command.includes("--max-old-space-size=1584"), container.command.join(" "));
  });
});

function envOf(deployment: { spec?: unknown } & Record<string, unknown>): Map<string, string> {
  const spec = deployment["spec"] as {
    template: { spec: { containers: { env: { name: string; value?: string }[] }[] } };
  };
  return new Map(spec.template.spec.containers[0]?.env.map((e) => [e.name, e.value ?? ""]) ?? []);
}

function settings(logLevel: string): Parameters<typeof reconcilerDeployment>[1] {
  return { image: "i", redisUrl: "redis://r:6379", queuePrefix: undefined, logLevel };
}

function containerOf(deployment: Record<string, unknown>): { resources: unknown; command: string[] } {
  const spec = deployment["spec"] as {
    template: { spec: { containers: { resources: unknown; command: string[] }[] } };
  };
  const container = spec.template.spec.containers[0];
  assert.ok(container !== undefined);
  return container;
}
