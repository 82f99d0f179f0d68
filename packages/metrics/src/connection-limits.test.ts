import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import {
  connectionLimits,
  connectionServerOptions,
  DefaultConnectionLimits,
  limitConnections,
} from "./connection-limits.ts";

test("the default limits: 10 s to start and to send headers, 30 s for a request, 256 connections", () => {
  assert.deepEqual(DefaultConnectionLimits, {
    idleMs: 10_000,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    maxConnections: 256,
    maxHeaderBytes: 16 * 1024,
    maxHeadersCount: 64,
  });
  assert.deepEqual(connectionLimits({ idleMs: 5 }), { ...DefaultConnectionLimits, idleMs: 5 });
});

test("a server given the defaults enforces them (Node's own defaults are 60 s, 300 s, 120 s handshake, no cap)", () => {
  const limits = connectionLimits();
  const http = createServer(connectionServerOptions(limits));
  limitConnections(http, limits);
  assert.equal(http.headersTimeout, 10_000);
  assert.equal(http.requestTimeout, 30_000);
  assert.equal(http.keepAliveTimeout, 5_000);
  assert.equal(http.timeout, 30_000);
  assert.equal(http.maxConnections, 256);
  assert.equal(http.maxHeadersCount, 64);
  const https = createHttpsServer(connectionServerOptions(limits));
  limitConnections(https, limits);
  assert.equal(https.maxConnections, 256);
  assert.equal(connectionServerOptions(limits).handshakeTimeout, 10_000);
  assert.equal(connectionServerOptions(limits).maxHeaderSize, 16 * 1024);
});
