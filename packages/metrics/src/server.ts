/**
 * The HTTP endpoints a controller pod exposes: /metrics for Prometheus, /healthz and /readyz for
 * the kubelet's probes. node:http only: three routes do not need a framework.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import {
  connectionLimits,
  connectionServerOptions,
  limitConnections,
  type ConnectionLimits,
} from "./connection-limits.ts";

export interface Health {
  /** False: the process should be restarted (liveness). */
  readonly healthy: boolean;
  /** False: do not send work yet or any more (readiness). */
  readonly ready: boolean;
  /** A short, human explanation; never a secret. */
  readonly detail?: string;
}

export interface ServeMetricsOptions {
  /** 0 picks a free port, reported back. */
  readonly port: number;
  /** Default: every interface (Prometheus scrapes the pod IP). */
  readonly host?: string;
  readonly registry: Registry;
  readonly health: () => Promise<Health>;
  /** A health check slower than this answers 503 (a hung check must not hang the probe). Default 5 s. */
  readonly healthTimeoutMs?: number;
  /** Deadlines and caps per connection; the defaults unless a test shortens them. */
  readonly connectionLimits?: Partial<ConnectionLimits>;
}

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

type Probe = "healthz" | "readyz";

async function checkHealth(health: () => Promise<Health>, timeoutMs: number): Promise<Health> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Health>((resolve) => {
    timer = setTimeout(
      () => resolve({ healthy: false, ready: false, detail: `health check did not answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([health(), timedOut]);
  } catch (error) {
    return {
      healthy: false,
      ready: false,
      detail: `health check failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    clearTimeout(timer);
  }
}

function send(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  method: string | undefined,
): void {
  response.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  response.end(method === "HEAD" ? undefined : body);
}

function sendJson(response: ServerResponse, status: number, value: unknown, method: string | undefined): void {
  send(response, status, "application/json; charset=utf-8", `${JSON.stringify(value)}\n`, method);
}

export async function serveMetrics(options: ServeMetricsOptions): Promise<MetricsServer> {
  const healthTimeoutMs = options.healthTimeoutMs ?? 5_000;

  const probe = async (which: Probe, method: string | undefined, response: ServerResponse): Promise<void> => {
    const health = await checkHealth(options.health, healthTimeoutMs);
    const ok = which === "healthz" ? health.healthy : health.ready;
    const body = {
      status: ok ? "ok" : which === "healthz" ? "unhealthy" : "not ready",
      ...(health.detail === undefined ? {} : { detail: health.detail }),
    };
    sendJson(response, ok ? 200 : 503, body, method);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.setHeader("allow", "GET, HEAD");
      sendJson(response, 405, { status: "method not allowed" }, request.method);
      return;
    }
    switch (path) {
      case "/metrics":
        send(response, 200, options.registry.contentType, await options.registry.metrics(), request.method);
        return;
      case "/healthz":
        await probe("healthz", request.method, response);
        return;
      case "/readyz":
        await probe("readyz", request.method, response);
        return;
      default:
        sendJson(response, 404, { status: "not found" }, request.method);
    }
  };

  // Reconcilers' ports are reachable from tenants' pods: no client may hold a connection without a request.
  const limits = connectionLimits(options.connectionLimits);
  const server = createServer(connectionServerOptions(limits), (request, response) => {
    handle(request, response).catch((error: unknown) => {
      // A failing collector must show up as a failed scrape, not as a hung connection.
      if (!response.headersSent)
        sendJson(
          response,
          500,
          { status: "error", detail: error instanceof Error ? error.message : String(error) },
          request.method,
        );
      else response.destroy();
    });
  });
  limitConnections(server, limits);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        // Prometheus keeps connections alive between scrapes; do not wait for it to hang up.
        server.closeAllConnections();
      }),
  };
}
