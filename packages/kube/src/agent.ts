/** The keep-alive agent every request of one client shares (watches connect on their own: stream-socket.ts). */
import http from "node:http";
import https from "node:https";
import { createSecureContext } from "node:tls";
import type { Endpoint, TlsMaterial } from "./connection.ts";

/** TLS options for both agents of a client: one SecureContext, built once. */
export interface AgentTls {
  readonly secureContext: ReturnType<typeof createSecureContext>;
  readonly rejectUnauthorized?: boolean;
  readonly servername?: string;
}

/**
 * Given the CA, certificate and key, Node builds a SecureContext for every connection (parsing the
 * PEMs each time); a reconciler opens 32 at its first big write and one per watch, so it is built
 * once per client instead.
 */
export function agentTls(tls: TlsMaterial): AgentTls {
  const { rejectUnauthorized, servername, ...material } = tls;
  return {
    secureContext: createSecureContext(material),
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    ...(servername === undefined ? {} : { servername }),
  };
}

export interface AgentOptions {
  /** Concurrent connections to the API server; requests beyond wait in the agent's queue. */
  readonly maxSockets: number;
  /**
   * Idle connections are closed after this long. It must stay below the server's idle timeout
   * (Go's http.Server closes idle HTTP/1.1 connections after 90 s in kube-apiserver), or a
   * request may be written into a socket the server is closing.
   */
  readonly idleSocketTimeoutMs: number;
}

export function createAgent(endpoint: Endpoint, tls: AgentTls, options: AgentOptions): http.Agent {
  const common = {
    keepAlive: true,
    maxSockets: options.maxSockets,
    maxFreeSockets: options.maxSockets,
    // LIFO reuses the warmest sockets so that the surplus after a burst goes idle and is closed.
    scheduling: "lifo" as const,
    // The agent applies this timeout to sockets; it destroys only free ones on expiry. Requests
    // in flight (long watches) are timed by the client, not by this.
    timeout: options.idleSocketTimeoutMs,
  };
  return endpoint.secure ? new https.Agent({ ...common, ...tls }) : new http.Agent(common);
}
