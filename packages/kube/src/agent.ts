/** The keep-alive agent every request of one client shares. */
import http from "node:http";
import https from "node:https";
import type { Endpoint, TlsMaterial } from "./connection.ts";

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

/**
 * The agent for streams (watches): a watch ends by closing its connection, so nothing is kept alive,
 * and there is no socket limit (each informer holds one stream).
 */
export function createStreamAgent(endpoint: Endpoint, tls: TlsMaterial): http.Agent {
  const common = { keepAlive: false, maxSockets: Infinity };
  return endpoint.secure ? new https.Agent({ ...common, ...tls }) : new http.Agent(common);
}

export function createAgent(endpoint: Endpoint, tls: TlsMaterial, options: AgentOptions): http.Agent {
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
