import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { Counter, Registry } from "prom-client";
import { serveMetrics, type Health, type ServeMetricsOptions } from "./server.ts";

async function serve(t: TestContext, options: Partial<ServeMetricsOptions> & { health?: () => Promise<Health> } = {}) {
  const registry = options.registry ?? new Registry();
  const server = await serveMetrics({
    port: 0,
    host: "127.0.0.1",
    registry,
    health: async () => ({ healthy: true, ready: true }),
    ...options,
  });
  t.after(() => server.close());
  return { server, registry };
}

async function get(
  port: number,
  path: string,
  method = "GET",
): Promise<{ status: number; type: string; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
  return { status: response.status, type: response.headers.get("content-type") ?? "", body: await response.text() };
}

test("reports the port it chose when asked for port 0", async (t) => {
  const { server } = await serve(t);
  assert.ok(server.port > 0);
});

test("/metrics answers in the Prometheus text format", async (t) => {
  const registry = new Registry();
  new Counter({ name: "config_sync_resource_fights_total", help: "fights", registers: [registry] }).inc(2);
  const { server } = await serve(t, { registry });
  const response = await get(server.port, "/metrics");
  assert.equal(response.status, 200);
  assert.match(response.type, /^text\/plain; version=0\.0\.4/);
  assert.match(response.body, /^# TYPE config_sync_resource_fights_total counter$/m);
  assert.match(response.body, /^config_sync_resource_fights_total 2$/m);
});

test("/healthz and /readyz answer 200 when healthy and ready", async (t) => {
  const { server } = await serve(t);
  assert.deepEqual(await get(server.port, "/healthz"), {
    status: 200,
    type: "application/json; charset=utf-8",
    body: '{"status":"ok"}\n',
  });
  assert.deepEqual(await get(server.port, "/readyz"), {
    status: 200,
    type: "application/json; charset=utf-8",
    body: '{"status":"ok"}\n',
  });
});

test("/readyz answers 503 while not ready, /healthz stays 200: not ready is not a reason to restart", async (t) => {
  const { server } = await serve(t, {
    health: async () => ({ healthy: true, ready: false, detail: "informers not synced" }),
  });
  const ready = await get(server.port, "/readyz");
  assert.equal(ready.status, 503);
  assert.deepEqual(JSON.parse(ready.body), { status: "not ready", detail: "informers not synced" });
  assert.equal((await get(server.port, "/healthz")).status, 200);
});

test("/healthz answers 503 when unhealthy", async (t) => {
  const { server } = await serve(t, {
    health: async () => ({ healthy: false, ready: false, detail: "redis lost for 5m" }),
  });
  const health = await get(server.port, "/healthz");
  assert.equal(health.status, 503);
  assert.deepEqual(JSON.parse(health.body), { status: "unhealthy", detail: "redis lost for 5m" });
});

test("a health check that throws or hangs answers 503 instead of hanging the probe", async (t) => {
  const failing = await serve(t, {
    health: async () => {
      throw new Error("boom");
    },
  });
  const failed = await get(failing.server.port, "/healthz");
  assert.equal(failed.status, 503);
  assert.deepEqual(JSON.parse(failed.body), { status: "unhealthy", detail: "health check failed: boom" });

  const hanging = await serve(t, { health: () => new Promise<Health>(() => undefined), healthTimeoutMs: 50 });
  const hung = await get(hanging.server.port, "/readyz");
  assert.equal(hung.status, 503);
  assert.match(JSON.parse(hung.body).detail, /did not answer within 50 ms/);
});

test("a failing collector makes the scrape fail with 500", async (t) => {
  const registry = new Registry();
  new Counter({
    name: "broken_total",
    help: "broken",
    registers: [registry],
    collect() {
      throw new Error("collector broke");
    },
  });
  const { server } = await serve(t, { registry });
  const response = await get(server.port, "/metrics");
  assert.equal(response.status, 500);
  assert.match(response.body, /collector broke/);
});

test("unknown paths answer 404, other methods 405, HEAD has no body", async (t) => {
  const { server } = await serve(t);
  assert.equal((await get(server.port, "/nope")).status, 404);
  assert.equal((await get(server.port, "/metrics", "POST")).status, 405);
  const head = await get(server.port, "/healthz", "HEAD");
  assert.equal(head.status, 200);
  assert.equal(head.body, "");
});

test("close() returns promptly even with a kept-alive connection open", async (t) => {
  const server = await serveMetrics({
    port: 0,
    host: "127.0.0.1",
    registry: new Registry(),
    health: async () => ({ healthy: true, ready: true }),
  });
  const agent = new Agent({ keepAlive: true });
  t.after(() => agent.destroy());
  await new Promise<void>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: server.port, path: "/healthz", agent }, (res) => {
      res.resume();
      res.on("end", resolve);
    });
    req.on("error", reject);
    req.end();
  });
  await server.close();
  await assert.rejects(fetch(`http://127.0.0.1:${server.port}/healthz`));
});
