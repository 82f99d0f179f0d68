/**
 * A plain-HTTP proxy in front of the run's API server that records every request it forwards, with
 * the time it arrived. Replicas of the manager run as the same ServiceAccount and user agent, so
 * the API server cannot tell their writes apart; giving each its own proxy can.
 */
import http from "node:http";
import https from "node:https";
import { readFile, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { testEnv } from "../../support/index.ts";
import { forwardToApiServer } from "../../support/forward-to-api-server.ts";
import { managerKubeconfig } from "./helpers.ts";

export interface ProxiedRequest {
  /** Date.now() when the request's head arrived. */
  readonly at: number;
  readonly method: string;
  /** The path without its query. */
  readonly path: string;
  readonly userAgent: string;
  /** The query string, without its `?` ("" without one). */
  readonly query: string;
  /** The Accept header ("" without one). */
  readonly accept: string;
  /** The API server's answer, once it came. */
  status?: number;
}

export interface RecordingProxy {
  readonly url: string;
  readonly requests: readonly ProxiedRequest[];
  /** The manager's kubeconfig (its ServiceAccount's token), pointing at this proxy. */
  readonly kubeconfig: string;
  /** Called as each request arrives, before it is forwarded. */
  onRequest: ((request: ProxiedRequest) => void) | undefined;
  close(): void;
}

/** Starts a proxy; `dir` holds its kubeconfig. Close it after the managers using it have stopped. */
export async function startRecordingProxy(t: TestContext, dir: string, name: string): Promise<RecordingProxy> {
  const env = testEnv();
  const upstream = new URL(env.server);
  const agent = new https.Agent({ ca: await readFile(env.caFile), keepAlive: true });
  const requests: ProxiedRequest[] = [];
  const server = http.createServer((req, res) => {
    const record: ProxiedRequest = {
      at: Date.now(),
      method: req.method ?? "",
      path: (req.url ?? "").split("?")[0] ?? "",
      userAgent: req.headers["user-agent"] ?? "",
      query: (req.url ?? "").split("?")[1] ?? "",
      accept: req.headers.accept ?? "",
    };
    requests.push(record);
    proxy.onRequest?.(record);
    forwardToApiServer(req, res, {
      upstream,
      agent,
      answered: (status) => (record.status = status),
      failed: (answer) => (answer.headersSent ? answer.destroy() : answer.writeHead(502).end()),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = JSON.parse(await readFile(await managerKubeconfig(), "utf8")) as {
    clusters: { cluster: Record<string, unknown> }[];
  };
  for (const c of config.clusters) c.cluster = { server: url };
  const kubeconfig = join(dir, `kubeconfig-${name}`);
  await writeFile(kubeconfig, JSON.stringify(config), { mode: 0o600 });
  const proxy: RecordingProxy = {
    url,
    requests,
    kubeconfig,
    onRequest: undefined,
    close: () => {
      server.closeAllConnections();
      server.close();
      agent.destroy();
    },
  };
  t.diagnostic(`proxy ${name} at ${url}`);
  return proxy;
}
