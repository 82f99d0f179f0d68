import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSync } from "@driftless/api";
import { reconcilerDeployment } from "./deployment-spec.ts";

test("a reconciler's cache and tmp emptyDirs have a sizeLimit, so a tenant's repository cannot fill the node's disk", () => {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace: "team-a" },
    spec: { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", auth: "none" } },
  });
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join("; "));
  const deployment = reconcilerDeployment(parsed.value, {
    image: "driftless:test",
    redisUrl: "redis://redis.config-management-system.svc:6379",
    queuePrefix: undefined,
    logLevel: "info",
  });
  const spec = deployment["spec"] as { template: { spec: { volumes: { name: string; emptyDir?: object }[] } } };
  const volumes = new Map(spec.template.spec.volumes.map((v) => [v.name, v.emptyDir]));
  assert.deepEqual(volumes.get("cache"), { sizeLimit: "1Gi" });
  assert.deepEqual(volumes.get("tmp"), { sizeLimit: "512Mi" });
  for (const [name, emptyDir] of volumes)
    if (emptyDir !== undefined) assert.ok("sizeLimit" in emptyDir, `the emptyDir ${name} has no sizeLimit`);
});
