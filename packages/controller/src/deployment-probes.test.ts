import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSync } from "@driftless/api";
import { reconcilerDeployment } from "./deployment-spec.ts";

interface Probe {
  readonly httpGet?: { readonly path: string };
  readonly periodSeconds?: number;
  readonly failureThreshold?: number;
}

test("a reconciler's liveness waits for a startup probe, so a slow start on a busy node is not restarted or reported", () => {
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
  const spec = deployment["spec"] as {
    template: { spec: { containers: { name: string; startupProbe?: Probe; livenessProbe?: Probe }[] } };
  };
  const reconciler = spec.template.spec.containers.find((c) => c.name === "reconciler");
  assert.equal(reconciler?.startupProbe?.httpGet?.path, "/healthz");
  // Two minutes to answer once, checked every 2 s; liveness (every 20 s) only after that.
  assert.equal((reconciler.startupProbe.periodSeconds ?? 0) * (reconciler.startupProbe.failureThreshold ?? 0), 120);
  assert.equal(reconciler.livenessProbe?.httpGet?.path, "/healthz");
});
