import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { closedWithin, connectRaw, type RawClient } from "@driftless/metrics/testing";
import { DefaultAdmissionLimits } from "./admission-capacity.ts";
import { AdmissionWebhookPath, BodyDeadlineMs } from "./admission-server.ts";
import { managedConfigMapDeletion, serveTestAdmission as serve, testTls as tls } from "./testing/admission-server.ts";

// Any pod can reach the admission port (the API server's address is not known in general), and a review
// refused for want of room fails open (failurePolicy Ignore): slow or idle clients must not crowd out the
// API server, which sends its review at once.

const MiB = 1024 * 1024;

/** A tenant's deletion of a managed ConfigMap: the real decision is a refusal. */
const deletion = managedConfigMapDeletion("u-1");

/** Sends the deletion as the API server does (at once) on a new connection; fails unless it is refused in time. */
async function refusedInTime(t: TestContext, port: number): Promise<void> {
  const started = Date.now();
  const client = await connectRaw(port, tls);
  client.socket.end(
    `POST ${AdmissionWebhookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(deletion)}\r\nConnection: close\r\n\r\n${deletion}`,
  );
  // The API server waits 3 s (timeoutSeconds) and then lets the write through.
  await closedWithin(client, 3_000, "the API server's review");
  t.diagnostic(`review answered in ${Date.now() - started} ms: ${client.received().split("\r\n")[0]}`);
  assert.match(client.received(), /^HTTP\/1\.1 200 [\s\S]*"allowed":false[\s\S]*not authorized to delete/);
}

/** Sends a review's headers announcing `length` bytes, then `first` of its body. */
function startReview(client: RawClient, length: number, first: string): void {
  client.socket.write(
    `POST ${AdmissionWebhookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${length}\r\n\r\n${first}`,
  );
}

/** Writes `byte` to each client every `everyMs` until the test ends. */
function trickle(t: TestContext, clients: readonly RawClient[], everyMs: number, byte = " "): void {
  const timer = setInterval(() => {
    for (const client of clients) if (!client.socket.destroyed) client.socket.write(byte);
  }, everyMs);
  t.after(() => clearInterval(timer));
}

function destroyAll(t: TestContext, clients: readonly RawClient[]): void {
  t.after(() => {
    for (const client of clients) client.socket.destroy();
  });
}

/** Lets the server take in what was sent (loopback: a few ms; generous for a loaded machine). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

test("requests announcing the largest bodies and stalling or trickling do not crowd out a review", async (t) => {
  // Real limits: the 8 largest announced bodies were the whole 24 MiB budget.
  const server = await serve(t);
  const count = DefaultAdmissionLimits.maxBytesInFlight / DefaultAdmissionLimits.maxBodyBytes;
  const slow = await Promise.all(Array.from({ length: count }, () => connectRaw(server.port, tls)));
  destroyAll(t, slow);
  for (const client of slow) startReview(client, DefaultAdmissionLimits.maxBodyBytes, "{");
  trickle(t, slow.slice(0, count / 2), 200);
  await settle();
  await refusedInTime(t, server.port);
});

test("more stalled requests than the concurrency cap do not crowd out a review", async (t) => {
  const server = await serve(t);
  const slow = await Promise.all(
    Array.from({ length: DefaultAdmissionLimits.maxConcurrent + 8 }, () => connectRaw(server.port, tls)),
  );
  destroyAll(t, slow);
  for (const client of slow) startReview(client, 1000, "{");
  await settle();
  await refusedInTime(t, server.port);
});

test("idle, handshaking and header-trickling connections up to the cap do not prevent a review", async (t) => {
  // Real limits: 256 connections, a quarter of them without a TLS handshake. The deadlines are lengthened:
  // on a loaded machine 192 TLS handshakes outlast the 2 s idle deadline, which would close the first
  // connections before the cap is reached (the deadlines have tests of their own).
  const server = await serve(t, {}, { idleMs: 60_000, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
  const connect = (count: number, withTls: boolean) =>
    Promise.all(Array.from({ length: count }, () => connectRaw(server.port, withTls ? tls : undefined)));
  const silent = await connect(64, false);
  const noRequest = await connect(96, true);
  const partialHeaders = await connect(72, true);
  // Fewer than the concurrency cap: the connections are what is full.
  const stalledBodies = await connect(DefaultAdmissionLimits.maxConcurrent - 8, true);
  const all = [...silent, ...noRequest, ...partialHeaders, ...stalledBodies];
  destroyAll(t, all);
  for (const client of partialHeaders) client.socket.write(`POST ${AdmissionWebhookPath} HTTP/1.1\r\nX-Padding: `);
  for (const client of stalledBodies) startReview(client, 1000, "{");
  trickle(t, partialHeaders, 200, "a");
  await settle();
  const open = all.filter((client) => !client.socket.destroyed).length;
  t.diagnostic(`${open} of ${all.length} connections open before the review`);
  assert.equal(open, 256);
  await refusedInTime(t, server.port);
});

test("a body trickled byte by byte is answered 408 and closed at the body deadline", async (t) => {
  const server = await serve(t);
  const slow = await connectRaw(server.port, tls);
  startReview(slow, 100_000, "{");
  // Never silent for long, so no inactivity timeout applies: only the body deadline does.
  trickle(t, [slow], 50);
  const elapsed = await closedWithin(slow, BodyDeadlineMs + 1_500, "trickled body");
  t.diagnostic(`closed after ${elapsed} ms (body deadline ${BodyDeadlineMs} ms)`);
  assert.ok(elapsed >= BodyDeadlineMs - 100, `closed before the deadline: ${elapsed} ms`);
  assert.match(slow.received(), /^HTTP\/1\.1 408 /);
});

test("bodies really sent but stalled short of their end are cut, oldest first, to make room for a review", async (t) => {
  const limits = { maxBodyBytes: 256 * 1024, maxBytesInFlight: MiB };
  const server = await serve(t, limits);
  const stalled: RawClient[] = [];
  for (let i = 0; i < 4; i++) {
    const client = await connectRaw(server.port, tls);
    stalled.push(client);
    // All but the last byte: the budget is full of bytes actually received.
    startReview(client, limits.maxBodyBytes, "{".padEnd(limits.maxBodyBytes - 1, " "));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  destroyAll(t, stalled);
  await refusedInTime(t, server.port);
  const [oldest] = stalled;
  assert.ok(oldest !== undefined);
  await closedWithin(oldest, 1_000, "the oldest stalled body");
  assert.match(oldest.received(), /^HTTP\/1\.1 429 [\s\S]*"status":"busy"/);
  assert.ok(
    stalled.slice(1).every((client) => !client.socket.destroyed),
    "only the oldest was cut",
  );
});
