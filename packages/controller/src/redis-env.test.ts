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

test("a reconciler Deployment names the Secret holding the Redis password and never holds the password", () => {
  const deployment = reconcilerDeployment(rootSync(), {
    image: "driftless:test",
    redisUrl: "redis://:hunter2@redis.config-management-system.svc:6379",
    redisPasswordSecret: { name: "driftless-redis", key: "password" },
    queuePrefix: undefined,
    logLevel: "info",
  });
  assert.doesNotMatch(JSON.stringify(deployment), /hunter2/);
  const env = containerEnv(deployment);
  assert.deepEqual(
    env.find((e) => e["name"] === "REDIS_URL"),
    { name: "REDIS_URL", value: "redis://redis.config-management-system.svc:6379" },
  );
  assert.deepEqual(
    env.find((e) => e["name"] === "REDIS_PASSWORD"),
    { name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: { name: "driftless-redis", key: "password" } } },
  );
});

test("without a password Secret the reconciler gets the URL alone", () => {
  const env = containerEnv(
    reconcilerDeployment(rootSync(), {
      image: "driftless:test",
      redisUrl: "redis://redis:6379",
      queuePrefix: undefined,
      logLevel: "info",
    }),
  );
  assert.deepEqual(
    env.filter((e) => String(e["name"]).startsWith("REDIS")),
    [{ name: "REDIS_URL", value: "redis://redis:6379" }],
  );
});
