import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import type { ConnectionLimits } from "./connection-limits.ts";
import { serveMetrics } from "./server.ts";
import { closedWithin, connectRaw } from "./testing.ts";

// Reconcilers' metrics ports are reachable from tenants' pods: these hold for every pod that serves metrics.

async function serve(t: TestContext, connectionLimits: Partial<ConnectionLimits>) {
  const server = await serveMetrics({
    port: 0,
    host: "127.0.0.1",
    registry: new Registry(),
    health: async () => ({ healthy: true, ready: true }),
    connectionLimits,
  });
  t.after(() => server.close());
  return server;
}

test("a connection that never sends a request is closed at the idle deadline", async (t) => {
  const server = await serve(t, { idleMs: 300 });
  const idle = await connectRaw(server.port);
  const elapsed = await closedWithin(idle, 5_000, "idle connection");
  t.diagnostic(`closed after ${elapsed} ms (deadline 300 ms)`);
  assert.ok(elapsed >= 250, `closed before the deadline: ${elapsed} ms`);
  assert.equal(idle.received(), "");
});

test("a client that trickles its request line is answered 408 and closed at the headers deadline", async (t) => {
  const server = await serve(t, { idleMs: 5_000, headersTimeoutMs: 600 });
  const slow = await connectRaw(server.port);
  // One byte every 50 ms: the connection is never silent, the headers never end.
  const line = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Padding: ".padEnd(4096, "a");
  let sent = 0;
  const trickle = setInterval(() => {
    if (!slow.socket.destroyed) slow.socket.write(line[sent++ % line.length] ?? "a");
  }, 50);
  t.after(() => clearInterval(trickle));
  const elapsed = await closedWithin(slow, 5_000, "trickling client");
  t.diagnostic(`closed after ${elapsed} ms and ${sent} bytes (deadline 600 ms)`);
  assert.ok(elapsed >= 550, `closed before the deadline: ${elapsed} ms`);
  assert.match(slow.received(), /^HTTP\/1\.1 408 /);
});

test("beyond the connection cap a connection is closed at once; requests succeed once others leave", async (t) => {
  const server = await serve(t, { maxConnections: 3, idleMs: 60_000 });
  const held = await Promise.all([0, 1, 2].map(() => connectRaw(server.port)));
  const extra = await connectRaw(server.port);
  const elapsed = await closedWithin(extra, 5_000, "connection beyond the cap");
  t.diagnostic(`the fourth connection closed after ${elapsed} ms`);
  assert.equal(extra.received(), "");
  for (const client of held) {
    client.socket.end();
    await client.closed;
  }
  const response = await fetch(`http://127.0.0.1:${server.port}/healthz`);
  assert.equal(response.status, 200);
});
