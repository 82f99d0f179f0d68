/**
 * What one client without credentials can cost any HTTP(S) port a driftless pod opens (/metrics and
 * probes, push webhooks, admission): every connection must send its request within a deadline, and
 * connections are capped, so idle or trickling sockets cannot exhaust file descriptors or memory.
 */
import type { IncomingMessage, Server as HttpServer } from "node:http";
import { Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";

export interface ConnectionLimits {
  /** A new connection must start its request (HTTPS: finish its TLS handshake, then start it) within this. */
  readonly idleMs: number;
  /** The request's headers must all arrive within this of its first byte (slowloris). */
  readonly headersTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this; also the longest a socket may stay silent. */
  readonly requestTimeoutMs: number;
  /** A kept-alive connection waiting for its next request is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** Connections open at once; a further one is closed as soon as it is accepted. */
  readonly maxConnections: number;
  readonly maxHeaderBytes: number;
  readonly maxHeadersCount: number;
}

/**
 * Every caller (Prometheus, the kubelet, Git providers, the API server) sends its request at once and
 * gives up within 10 s; 256 connections per port keep three ports under a 1,024 file descriptor limit.
 */
export const DefaultConnectionLimits: ConnectionLimits = {
  idleMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 256,
  maxHeaderBytes: 16 * 1024,
  maxHeadersCount: 64,
};

/** The defaults with the overrides given (tests use short deadlines). */
export function connectionLimits(overrides: Partial<ConnectionLimits> = {}): ConnectionLimits {
  return { ...DefaultConnectionLimits, ...overrides };
}

/** Options for `http.createServer` / `https.createServer`: the limits Node enforces itself. */
export function connectionServerOptions(limits: ConnectionLimits) {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks the two timeouts above only this often (30 s by default).
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    maxHeaderSize: limits.maxHeaderBytes,
    // TLS: a socket that never completes its handshake (Node's default waits 120 s).
    handshakeTimeout: limits.idleMs,
  } as const;
}

/**
 * The limits Node has no option for. headersTimeout starts at a request's first byte, so a socket
 * that sends nothing would stay open forever: it gets `idleMs` to start one, then the socket
 * inactivity timeout of `requestTimeoutMs` (Node destroys a socket that times out unless someone listens).
 */
export function limitConnections(server: HttpServer | HttpsServer, limits: ConnectionLimits): void {
  server.maxConnections = limits.maxConnections;
  server.maxHeadersCount = limits.maxHeadersCount;
  server.setTimeout(limits.requestTimeoutMs);
  const awaitingFirstRequest = new WeakSet<Socket>();
  // An HTTPS server hands the HTTP layer its sockets once the handshake is done (handshakeTimeout before that).
  const accepted = server instanceof HttpsServer ? "secureConnection" : "connection";
  server.on(accepted, (socket: Socket) => {
    awaitingFirstRequest.add(socket);
    socket.setTimeout(limits.idleMs);
  });
  server.on("request", ({ socket }: IncomingMessage) => {
    if (awaitingFirstRequest.delete(socket)) socket.setTimeout(limits.requestTimeoutMs);
  });
}
