/**
 * A plain-HTTP proxy in front of the test's API server, for a fault at a known point: it records every
 * request, and `hold` may keep one waiting (say, while the test stops the API server). When the API
 * server cannot be reached, or its answer is cut, the client's connection is cut too, with no answer of
 * the proxy's own: to the client it looks like the API server itself going away.
 */
import http from "node:http";
import https from "node:https";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { removeQuietly, testEnv } from "../../support/index.ts";
import { forwardToApiServer } from "../../support/forward-to-api-server.ts";

export interface ProxiedRequest {
  readonly method: string;
  /** The path without its query. */
  readonly path: string;
  /** The query string without its `?`. */
  readonly query: string;
  /** The API server's answer; undefined while waiting, 0 when the API server could not be reached. */
  status?: number;
}

export interface ApiProxy {
  readonly requests: readonly ProxiedRequest[];
  /** Its plain-HTTP address, for a kubeconfig of another identity. */
  readonly url: string;
  /** The admin's kubeconfig, pointing at the proxy. */
  readonly kubeconfig: string;
  /** Called as each request arrives; a returned promise holds the request until it settles. */
  hold: ((request: ProxiedRequest) => Promise<void> | undefined) | undefined;
}

export async function startApiProxy(t: TestContext): Promise<ApiProxy> {
  const env = testEnv();
  const upstream = new URL(env.server);
  const agent = new https.Agent({ ca: await readFile(env.caFile), keepAlive: true });
  const requests: ProxiedRequest[] = [];
  // No answer of the proxy's own when the API server is gone: the client's connection is cut, as by the server.
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, record: ProxiedRequest): void =>
    forwardToApiServer(req, res, {
      upstream,
      agent,
      answered: (status) => (record.status = status),
      failed: (answer) => {
        record.status ??= 0;
        answer.destroy();
      },
    });
  const server = http.createServer((req, res) => {
    const [path = "", query = ""] = (req.url ?? "").split("?");
    const record: ProxiedRequest = { method: req.method ?? "", path, query };
    requests.push(record);
    const held = proxy.hold?.(record);
    if (held === undefined) forward(req, res, record);
    else void held.then(() => forward(req, res, record));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), "driftless-api-proxy-"));
  const kubeconfig = join(dir, "kubeconfig");
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "proxy", cluster: { server: url } }],
      users: [{ name: "admin", user: { token: env.adminToken } }],
      contexts: [{ name: "proxy", context: { cluster: "proxy", user: "admin" } }],
      "current-context": "proxy",
    }),
    { mode: 0o600 },
  );
  const proxy: ApiProxy = { requests, url, kubeconfig, hold: undefined };
  t.after(async () => {
    server.closeAllConnections();
    server.close();
    agent.destroy();
    await removeQuietly(dir);
  });
  return proxy;
}
