import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSync, type RSync } from "@driftless/api";
import { reconcilerDeployment } from "./deployment-spec.ts";

function rootSync(): RSync {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system" },
    spec: { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", auth: "none" } },
  });
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join("; "));
  return parsed.value;
}

function containerEnv(deployment: ReturnType<typeof reconcilerDeployment>): Record<string, unknown>[] {
  const spec = deployment["spec"] as { template: { spec: { containers: { env: Record<string, unknown>[] }[] } } };
  return spec.template.spec.containers[0]?.env ?? [];
}

test("a reconciler Deployment reads its Redis user and password from its own Secret and holds no credential", () => {
  const deployment = reconcilerDeployment(
    rootSync(),
    {
      image: "driftless:test",
      redisUrl: "redis://admin:hunter2@redis.config-management-system.svc:6379",
      queuePrefix: undefined,
      logLevel: "info",
    },
    "0123456789abcdef",
  );
  assert.doesNotMatch(JSON.stringify(deployment), /hunter2|admin/);
  const env = containerEnv(deployment);
  const secret = { name: "root-reconciler-redis" };
  assert.deepEqual(
    env.filter((e) => String(e["name"]).startsWith("REDIS")),
    [
      { name: "REDIS_URL", value: "redis://redis.config-management-system.svc:6379" },
      { name: "REDIS_USERNAME", valueFrom: { secretKeyRef: { ...secret, key: "username" } } },
      { name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: { ...secret, key: "password" } } },
    ],
  );
});
