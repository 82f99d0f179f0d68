import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { closedWithin, connectRaw, type RawClient } from "@driftless/metrics/testing";
import { DefaultAdmissionLimits } from "./admission-capacity.ts";
import { AdmissionWebhookPath } from "./admission-server.ts";
import { managedConfigMapDeletion, serveTestAdmission as serve, testTls as tls } from "./testing/admission-server.ts";

// The admission port takes connections from anyone who can reach the pod, before any credential is seen.

const review = JSON.stringify({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "u-1",
    kind: { group: "", version: "v1", kind: "ConfigMap" },
    operation: "CREATE",
    userInfo: { username: "alice" },
    object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: "ns" } },
  },
});

/** Sends a review's headers announcing `length` bytes; resolves once the server has taken the request on. */
async function startReview(client: RawClient, length: number): Promise<void> {
  client.socket.write(
    `POST ${AdmissionWebhookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  // Node answers 100 Continue right before the handler runs (and either admits the request or refuses it).
  while (!/^HTTP\/1\.1 \d{3} /.test(client.received())) await once(client.socket, "data");
}

/** Sends `body` whole and at once, as the API server does (which keeps its side open for the answer). */
function send(client: RawClient, body: string): void {
  client.socket.write(
    `POST ${AdmissionWebhookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

async function allowed(port: number, client?: RawClient): Promise<void> {
  const reviewer = client ?? (await connectRaw(port, tls));
  send(reviewer, review);
  await closedWithin(reviewer, 5_000, "a review");
  assert.match(reviewer.received(), /^HTTP\/1\.1 200 [\s\S]*"allowed":true/);
}

test("a connection that never starts its TLS handshake is closed at the idle deadline", async (t) => {
  const server = await serve(t, {}, { idleMs: 300 });
  const idle = await connectRaw(server.port);
  const elapsed = await closedWithin(idle, 5_000, "connection without a handshake");
  t.diagnostic(`closed after ${elapsed} ms (deadline 300 ms)`);
  assert.ok(elapsed >= 250, `closed before the deadline: ${elapsed} ms`);
});

test("a connection that completes its handshake and sends no request is closed at the idle deadline", async (t) => {
  const server = await serve(t, {}, { idleMs: 300 });
  const idle = await connectRaw(server.port, tls);
  const elapsed = await closedWithin(idle, 5_000, "TLS connection without a request");
  t.diagnostic(`closed ${elapsed} ms after connecting (deadline 300 ms for the handshake, then 300 ms)`);
  assert.ok(elapsed >= 250, `closed before the deadline: ${elapsed} ms`);
});

test("a client that trickles its headers over TLS is answered 408 and closed at the headers deadline", async (t) => {
  const server = await serve(t, {}, { idleMs: 5_000, headersTimeoutMs: 600 });
  const slow = await connectRaw(server.port, tls);
  const headers = `POST ${AdmissionWebhookPath} HTTP/1.1\r\nHost: x\r\nX-Padding: `.padEnd(4096, "a");
  let sent = 0;
  const trickle = setInterval(() => {
    if (!slow.socket.destroyed) slow.socket.write(headers[sent++ % headers.length] ?? "a");
  }, 50);
  t.after(() => clearInterval(trickle));
  const elapsed = await closedWithin(slow, 5_000, "trickling client");
  t.diagnostic(`closed after ${elapsed} ms and ${sent} bytes (deadline 600 ms)`);
  assert.match(slow.received(), /^HTTP\/1\.1 408 /);
});

test("beyond the connection cap the connection idle longest is closed, not the new one", async (t) => {
  const server = await serve(t, {}, { maxConnections: 3, idleMs: 60_000 });
  const held: RawClient[] = [];
  for (let i = 0; i < 3; i++) {
    held.push(await connectRaw(server.port, tls));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.after(() => held.forEach((client) => client.socket.destroy()));
  const [oldest, ...others] = held;
  assert.ok(oldest !== undefined);
  const extra = await connectRaw(server.port, tls);
  const elapsed = await closedWithin(oldest, 5_000, "the connection idle longest");
  t.diagnostic(`the oldest connection closed ${elapsed} ms after it opened`);
  assert.equal(oldest.received(), "");
  assert.ok(
    others.every((client) => !client.socket.destroyed),
    "a newer connection was closed",
  );
  await allowed(server.port, extra);
});

test("a body announced over the limit is refused with 413 before any of it is sent", async (t) => {
  // Real limits: a 4 MiB review is over the 3 MiB the endpoint reads.
  const server = await serve(t, {}, {});
  const client = await connectRaw(server.port, tls);
  client.socket.write(
    `POST ${AdmissionWebhookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${DefaultAdmissionLimits.maxBodyBytes + 1024 * 1024}\r\n\r\n{`,
  );
  await closedWithin(client, 5_000, "oversize request");
  assert.match(client.received(), /^HTTP\/1\.1 413 /);
});

test("a chunked body streamed past the limit gets 413 and its connection closed, not drained", async (t) => {
  const server = await serve(t, { maxBodyBytes: 64 * 1024 }, {});
  const client = await connectRaw(server.port, tls);
  let closed = false;
  void client.closed.then(() => (closed = true));
  client.socket.write(`POST ${AdmissionWebhookPath} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
  const chunk = `10000\r\n${"x".repeat(0x10000)}\r\n`;
  const total = 32 * 1024 * 1024;
  let sent = 0;
  while (!closed && sent < total) {
    sent += 0x10000;
    if (!client.socket.write(chunk)) await Promise.race([once(client.socket, "drain"), client.closed]);
  }
  await closedWithin(client, 5_000, "oversize chunked request");
  t.diagnostic(`closed after ${sent} of ${total} bytes sent`);
  assert.ok(sent < total, "the server read the whole oversized body");
  assert.match(client.received(), /^HTTP\/1\.1 413 /);
});

test("beyond the concurrency cap of reviews being answered a review gets 429 with Retry-After at once, its body unread", async (t) => {
  // The deletions wait on the cluster (is their namespace being deleted?) until the test lets them go.
  const cluster = Promise.withResolvers<boolean>();
  const server = await serve(t, { maxConcurrent: 3 }, {}, { namespaceTerminating: () => cluster.promise });
  t.after(() => cluster.resolve(false));
  const deletion = managedConfigMapDeletion("u-2");
  const waiting = await Promise.all([0, 1, 2].map(() => connectRaw(server.port, tls)));
  for (const client of waiting) send(client, deletion);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const fourth = await connectRaw(server.port, tls);
  await startReview(fourth, 1000);
  await closedWithin(fourth, 5_000, "request beyond the cap");
  assert.match(
    fourth.received(),
    /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 429 [\s\S]*retry-after: 1[\s\S]*"status":"busy"/i,
  );
  cluster.resolve(false);
  for (const client of waiting) {
    await closedWithin(client, 5_000, "a deletion waiting on the cluster");
    assert.match(client.received(), /^HTTP\/1\.1 200 [\s\S]*"allowed":false/);
  }
  await allowed(server.port);
});

test("a small body that would parse into more objects than the token cap allows is refused with 413 unparsed", async (t) => {
  const server = await serve(t, { maxJsonTokens: 1000 }, {});
  // 6 KiB of `{},` is 4,000 tokens: an object each for JSON.parse.
  const dense = review.replace('"metadata":', `"pad":[${"{},".repeat(2000)}{}],"metadata":`);
  const client = await connectRaw(server.port, tls);
  client.socket.end(
    `POST ${AdmissionWebhookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(dense)}\r\nConnection: close\r\n\r\n${dense}`,
  );
  await closedWithin(client, 5_000, "dense request");
  assert.match(client.received(), /^HTTP\/1\.1 413 [\s\S]*more than 1000 JSON tokens/);
  await allowed(server.port);
});
