/**
 * `driftless console` with a kubeconfig whose API server does not answer (nothing listens on its port):
 * an action answers 502 with the console's notice, not a crash of the request.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { testEnv, removeAfter } from "../support/index.ts";
import { startConsole } from "../support/console.ts";

/** A loopback port nothing listens on: bound by us, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(typeof address === "object" && address !== null);
  return address.port;
}

/** The test user's kubeconfig pointed at `server`. */
async function kubeconfigFor(dir: string, server: string): Promise<string> {
  const config = parse(await readFile(testEnv().kubeconfig, "utf8")) as { clusters: { cluster: { server: string } }[] };
  for (const c of config.clusters) c.cluster.server = server;
  const path = join(dir, "config");
  await writeFile(path, stringify(config), { mode: 0o600 });
  return path;
}

function call(port: number, path: string, method: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

test("an action while the API server does not answer gets 502 and the console's notice, not a 500 from an invalid status", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "console-unreachable-"));
  removeAfter(t, dir);
  const kubeconfig = await kubeconfigFor(dir, `https://127.0.0.1:${await closedPort()}`);
  const console = await startConsole(t, "--kubeconfig", kubeconfig);
  const base = new URL(console.url).pathname;
  const home = await call(console.port, base, "GET", {});
  const csrf = /data-csrf="([^"]+)"/.exec(home.body)?.[1] ?? "";
  assert.notEqual(csrf, "");

  const answer = await call(console.port, `${base}syncs/rootsync/config-management-system/root-sync/suspend`, "POST", {
    origin: console.origin,
    "x-driftless-csrf": csrf,
  });
  assert.equal(answer.status, 502, answer.body);
  assert.match(answer.body, /<p class="refused" role="alert"><strong>The API server did not answer:<\/strong>/);
  assert.match(answer.body, /ECONNREFUSED/);
});
