import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { once } from "node:events";
import { createConnection, type Socket } from "node:net";
import { closedWithin, connectRaw } from "@driftless/metrics/testing";
import { createLogger } from "@driftless/sync";
import { serveWebhooks } from "./webhook-server.ts";
import type { Push } from "./webhook-push.ts";

const secret = "top-secret";
const quiet = createLogger({}, { write: () => undefined });

test("only a verified push reaches onPush; how many syncs it triggered goes to onResult, never to the sender", async (t) => {
  const pushes: Push[] = [];
  const results: string[] = [];
  const counts: (number | undefined)[] = [];
  let unavailable = false;
  const server = await serveWebhooks({
    port: 0,
    host: "127.0.0.1",
    secret,
    log: quiet,
    onResult: (_provider, result, syncs) => {
      results.push(result);
      counts.push(syncs);
    },
    onPush: (push) => {
      if (unavailable) return Promise.reject(new Error("redis down"));
      pushes.push(push);
      return Promise.resolve(2);
    },
  });
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.port}/webhook`;
  const body = JSON.stringify({ repo: "https://example.invalid/r.git", branch: "main" });
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

  assert.equal((await fetch(url, { method: "POST", body })).status, 401);
  assert.equal(pushes.length, 0);
  const ok = await fetch(url, { method: "POST", body, headers: { "x-driftless-signature": signature } });
  assert.equal(ok.status, 202);
  // The count would tell anyone holding the shared secret which repositories and branches tenants sync.
  assert.deepEqual(await ok.json(), { status: "accepted" });
  assert.equal(counts[1], 2);
  assert.equal(pushes[0]?.branch, "main");

  assert.equal((await fetch(url)).status, 405);
  assert.equal((await fetch(`http://127.0.0.1:${server.port}/other`, { method: "POST", body })).status, 404);
  const huge = "x".repeat(1024 * 1024 + 1);
  assert.equal((await fetch(url, { method: "POST", body: huge })).status, 413);
  unavailable = true;
  const next = JSON.stringify({ repo: "https://example.invalid/r.git", branch: "main", commit: "b".repeat(40) });
  const nextSignature = `sha256=${createHmac("sha256", secret).update(next).digest("hex")}`;
  assert.equal(
    (await fetch(url, { method: "POST", body: next, headers: { "x-driftless-signature": nextSignature } })).status,
    503,
    "the sender should retry when the queue is down",
  );
  assert.deepEqual(results, ["unauthorized", "accepted", "invalid", "unavailable"]);
});

/** A raw client, to send a request as slowly (or as partly) as an attacker would. */
function connect(port: number): Promise<{ socket: Socket; received: () => string }> {
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = createConnection({ host: "127.0.0.1", port }, () => resolve({ socket, received: () => text }));
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("error", () => undefined);
    socket.once("error", reject);
  });
}

/** Resolves once the server has parsed the headers (Node answers `Expect: 100-continue` right before handling). */
async function headersHandled(socket: Socket, received: () => string): Promise<void> {
  while (!received().includes("100 Continue")) await once(socket, "data");
}

test("a client that trickles its headers or body is cut at the read deadline", { timeout: 10_000 }, async (t) => {
  const results: string[] = [];
  const server = await serveWebhooks({
    port: 0,
    host: "127.0.0.1",
    secret,
    log: quiet,
    limits: { readTimeoutMs: 300 },
    onResult: (_provider, result) => results.push(result),
    onPush: () => Promise.resolve(1),
  });
  t.after(() => server.close());
  const started = Date.now();
  const slowHeaders = await connect(server.port);
  slowHeaders.socket.write("POST /webhook HTTP/1.1\r\nHost: x\r\n");
  const slowBody = await connect(server.port);
  slowBody.socket.write("POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n");
  await headersHandled(slowBody.socket, slowBody.received);
  slowBody.socket.write("{");
  await Promise.all([once(slowHeaders.socket, "close"), once(slowBody.socket, "close")]);
  const elapsed = Date.now() - started;
  t.diagnostic(`both cut after ${elapsed} ms (deadline 300 ms)`);
  assert.ok(elapsed >= 250, `cut before the deadline: ${elapsed} ms`);
  assert.match(slowHeaders.received(), /^HTTP\/1\.1 408 /);
  assert.deepEqual(results, ["incomplete"]);
});

test(
  "beyond the concurrency cap a request gets 503 at once, its body unread; capacity returns when requests end",
  { timeout: 10_000 },
  async (t) => {
    const results: string[] = [];
    const server = await serveWebhooks({
      port: 0,
      host: "127.0.0.1",
      secret,
      log: quiet,
      limits: { maxConcurrent: 3, readTimeoutMs: 60_000 },
      onResult: (_provider, result) => results.push(result),
      onPush: () => Promise.resolve(1),
    });
    t.after(() => server.close());
    const slow = await Promise.all([0, 1, 2].map(() => connect(server.port)));
    for (const client of slow) {
      client.socket.write(
        "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\nExpect: 100-continue\r\n\r\n",
      );
      await headersHandled(client.socket, client.received);
      client.socket.write("x".repeat(1000));
    }
    // The fourth announces a 1 MiB body and sends none of it: the answer must not wait for it.
    const fourth = await connect(server.port);
    fourth.socket.write("POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n");
    await once(fourth.socket, "close");
    assert.match(fourth.received(), /^HTTP\/1\.1 503 [\s\S]*retry-after: 1[\s\S]*"status":"busy"/i);

    // The slow requests end unfinished; the server frees their slots as their connections close.
    for (const client of slow) {
      client.socket.end();
      await once(client.socket, "close");
    }
    const body = JSON.stringify({ repo: "https://example.invalid/r.git", branch: "main" });
    const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
    const url = `http://127.0.0.1:${server.port}/webhook`;
    const ok = await fetch(url, { method: "POST", body, headers: { "x-driftless-signature": signature } });
    assert.equal(ok.status, 202);
    assert.equal(results.filter((r) => r === "busy").length, 1);
  },
);

test(
  "a body streamed past the size limit gets 413 and its connection closed, not drained",
  { timeout: 10_000 },
  async (t) => {
    const server = await serveWebhooks({
      port: 0,
      host: "127.0.0.1",
      secret,
      log: quiet,
      limits: { maxBodyBytes: 64 * 1024 },
      onPush: () => Promise.resolve(1),
    });
    t.after(() => server.close());
    const client = await connect(server.port);
    let closed = false;
    const gone = new Promise<void>((resolve) => client.socket.once("close", resolve));
    void gone.then(() => (closed = true));
    // Chunked: no Content-Length to refuse it by, so the limit must hold while reading.
    client.socket.write("POST /webhook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    const chunk = `10000\r\n${"x".repeat(0x10000)}\r\n`;
    const total = 32 * 1024 * 1024;
    let sent = 0;
    while (!closed && sent < total) {
      sent += 0x10000;
      if (!client.socket.write(chunk)) await Promise.race([new Promise((r) => client.socket.once("drain", r)), gone]);
    }
    await gone;
    t.diagnostic(
      `connection closed after ${sent} of ${total} bytes sent; received ${JSON.stringify(client.received().slice(0, 12))}`,
    );
    assert.ok(sent < total, "the server read the whole oversized body");
  },
);

test("a connection that never sends a request is closed at the idle deadline", async (t) => {
  const server = await serveWebhooks({
    port: 0,
    host: "127.0.0.1",
    secret,
    log: quiet,
    connectionLimits: { idleMs: 300 },
    onPush: () => Promise.resolve(1),
  });
  t.after(() => server.close());
  const idle = await connectRaw(server.port);
  const elapsed = await closedWithin(idle, 5_000, "idle connection");
  t.diagnostic(`closed after ${elapsed} ms (deadline 300 ms)`);
  assert.ok(elapsed >= 250, `closed before the deadline: ${elapsed} ms`);
});

test("beyond the connection cap a connection is closed at once; a push succeeds once others leave", async (t) => {
  const server = await serveWebhooks({
    port: 0,
    host: "127.0.0.1",
    secret,
    log: quiet,
    connectionLimits: { maxConnections: 3, idleMs: 60_000 },
    onPush: () => Promise.resolve(1),
  });
  t.after(() => server.close());
  const held = await Promise.all([0, 1, 2].map(() => connectRaw(server.port)));
  const extra = await connectRaw(server.port);
  await closedWithin(extra, 5_000, "connection beyond the cap");
  assert.equal(extra.received(), "");
  for (const client of held) {
    client.socket.end();
    await client.closed;
  }
  const body = JSON.stringify({ repo: "https://example.invalid/r.git", branch: "main" });
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  const url = `http://127.0.0.1:${server.port}/webhook`;
  const ok = await fetch(url, { method: "POST", body, headers: { "x-driftless-signature": signature } });
  assert.equal(ok.status, 202);
});

test("a replayed push queues nothing until it has been forgotten; a push that got a 503 is not remembered", async (t) => {
  let now = 0;
  let unavailable = true;
  const pushes: Push[] = [];
  const server = await serveWebhooks({
    port: 0,
    host: "127.0.0.1",
    secret,
    log: quiet,
    recentPushes: { ttlMs: 60_000, capacity: 16, now: () => now },
    onPush: (push) => {
      if (unavailable) return Promise.reject(new Error("redis down"));
      pushes.push(push);
      return Promise.resolve(1);
    },
  });
  t.after(() => server.close());
  const body = JSON.stringify({ repo: "https://example.invalid/r.git", branch: "main", commit: "a".repeat(40) });
  const send = async (): Promise<{ status: number; body: unknown }> => {
    const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
    const response = await fetch(`http://127.0.0.1:${server.port}/webhook`, {
      method: "POST",
      body,
      headers: { "x-driftless-signature": signature },
    });
    return { status: response.status, body: await response.json() };
  };

  assert.equal((await send()).status, 503);
  unavailable = false;
  assert.deepEqual(await send(), { status: 202, body: { status: "accepted" } }, "the sender's retry gets through");
  assert.deepEqual(await send(), {
    status: 202,
    body: { status: "ignored", detail: "this push was already handled" },
  });
  assert.equal(pushes.length, 1);
  now += 60_001;
  assert.deepEqual(await send(), { status: 202, body: { status: "accepted" } });
  assert.equal(pushes.length, 2);

  // Without a commit, one push's body is every push's: each is acted on.
  const bare = JSON.stringify({ repo: "https://example.invalid/r.git", branch: "main" });
  const bareSignature = `sha256=${createHmac("sha256", secret).update(bare).digest("hex")}`;
  for (let i = 0; i < 2; i++) {
    const response = await fetch(`http://127.0.0.1:${server.port}/webhook`, {
      method: "POST",
      body: bare,
      headers: { "x-driftless-signature": bareSignature },
    });
    assert.deepEqual(await response.json(), { status: "accepted" });
  }
  assert.equal(pushes.length, 4);
});
