/**
 * The client's HTTP behaviour against a scripted local server: what goes on the wire, retries
 * that are safe, deadlines, cancellation, paging and stream decoding. (Behaviour against a real
 * kube-apiserver is in test/integration/kube.)
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient } from "./client.ts";
import { KubeApiError, isGone, isNotFound } from "./errors.ts";
import type { ResourceMapping } from "./types.ts";

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly socket: unknown;
}

type Handler = (req: Seen, res: http.ServerResponse) => void;

const cm: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: [],
};

let server: http.Server;
let handler: Handler = (_req, res) => res.end();
const seen: Seen[] = [];

function status(
  res: http.ServerResponse,
  code: number,
  reason: string,
  message: string,
  headers: http.OutgoingHttpHeaders = {},
): void {
  res.writeHead(code, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code }));
}

function json(res: http.ServerResponse, value: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(200, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(value));
}

async function client(
  options: {
    timeoutMs?: number;
    onWarning?: (w: string) => void;
    maxSockets?: number;
    fence?: (operation: string) => void;
  } = {},
): Promise<KubeClient> {
  const kc = new KubeConfig();
  const { port } = server.address() as AddressInfo;
  kc.loadFromOptions({
    // Plain HTTP without skip-tls-verify, as a kubeconfig for `kubectl proxy` has it.
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: false }],
    users: [{ name: "u", token: "secret-token" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return KubeClient.fromConfig(kc, { ...options, userAgent: "driftless-test" });
}

const obj = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns" }, data: { k: "v" } };

before(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        socket: req.socket,
      };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});

after(() => {
  server.closeAllConnections();
  server.close();
});

void describe("KubeClient over HTTP", () => {
  void it("sends the object as given, with auth, user agent, content type and query", async () => {
    seen.length = 0;
    handler = (req, res) =>
      json(res, { ...JSON.parse(req.body), metadata: { name: "a", namespace: "ns", resourceVersion: "7" } }, {});
    const c = await client();
    const directive = {
      ...obj,
      spec: { containers: [{ name: "x", $patch: "replace" }] },
      unknownField: { kept: true },
    };
    const created = await c.create(cm, directive, { fieldManager: "driftless", dryRun: true });
    assert.equal(created.metadata.resourceVersion, "7");
    const req = seen[0];
    assert.equal(req?.method, "POST");
    assert.equal(req?.url, "/api/v1/namespaces/ns/configmaps?fieldManager=driftless&dryRun=All");
    assert.equal(req?.headers.authorization, "Bearer secret-token");
    assert.equal(req?.headers["user-agent"], "driftless-test");
    assert.equal(req?.headers["content-type"], "application/json");
    assert.deepEqual(JSON.parse(req?.body ?? ""), directive, "no field, directive or unknown key is dropped");
    await c.patch(cm, "ns", "a", { data: { k: null } }, "strategic-merge");
    assert.equal(seen[1]?.headers["content-type"], "application/strategic-merge-patch+json");
    await c.patch(cm, "ns", "a", obj, "apply", { fieldManager: "driftless", force: true });
    assert.equal(seen[2]?.headers["content-type"], "application/apply-patch+yaml");
    assert.equal(seen[2]?.url, "/api/v1/namespaces/ns/configmaps/a?fieldManager=driftless&force=true");
    assert.deepEqual(c.requests.snapshot(), {
      get: 0,
      list: 0,
      watch: 0,
      create: 1,
      update: 0,
      patch: 2,
      delete: 0,
      deletecollection: 0,
    });
    assert.equal(c.requests.writes(), 3);
    c.close();
  });

  void it("answers undefined/false for a missing object, and classifies a bare 404 as an unserved type", async () => {
    handler = (req, res) => {
      if (req.url.startsWith("/apis/")) {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("404 page not found\n");
      } else status(res, 404, "NotFound", 'configmaps "a" not found');
    };
    const c = await client();
    assert.equal(await c.get(cm, "ns", "a"), undefined);
    assert.equal(await c.delete(cm, "ns", "a"), false);
    const widgets: ResourceMapping = {
      group: "example.com",
      version: "v1",
      kind: "Widget",
      resource: "widgets",
      namespaced: true,
      verbs: [],
    };
    await assert.rejects(
      c.create(widgets, { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "ns" } }),
      (e: unknown) => isNotFound(e) && e.errorClass === "stalled",
    );
    c.close();
  });

  void it("sends DeleteOptions with propagation policy and preconditions", async () => {
    seen.length = 0;
    handler = (_req, res) => json(res, { kind: "Status", status: "Success" });
    const c = await client();
    assert.equal(
      await c.delete(cm, "ns", "a", { propagationPolicy: "Foreground", preconditions: { uid: "u-1" } }),
      true,
    );
    assert.deepEqual(JSON.parse(seen[0]?.body ?? ""), {
      kind: "DeleteOptions",
      apiVersion: "v1",
      propagationPolicy: "Foreground",
      preconditions: { uid: "u-1" },
    });
    c.close();
  });

  void it("re-sends after 429 with Retry-After, and gives up with the classified error", async () => {
    let calls = 0;
    handler = (req, res) => {
      calls += 1;
      if (calls < 3) status(res, 429, "TooManyRequests", "slow down", { "retry-after": "0" });
      else json(res, { ...JSON.parse(req.body), metadata: { name: "a", namespace: "ns", resourceVersion: "1" } });
    };
    const c = await client();
    await c.create(cm, obj);
    assert.equal(calls, 3);
    assert.equal(c.requests.count("create"), 3, "each attempt is a request");
    calls = -100;
    await assert.rejects(
      c.create(cm, obj),
      (e: unknown) => e instanceof KubeApiError && e.status === 429 && e.retryable && e.retryAfterMs === 0,
    );
    c.close();
  });

  void it("asks the fence before every write and every re-send, and sends nothing it refuses", async () => {
    let calls = 0;
    handler = (req, res) => {
      if (req.method !== "GET") calls += 1;
      if (calls === 1) status(res, 429, "TooManyRequests", "slow down", { "retry-after": "0" });
      else json(res, { ...obj, metadata: { name: "a", namespace: "ns", resourceVersion: "1" } });
    };
    const asked: string[] = [];
    const refused = new Error("not the leader");
    const c = await client({
      fence: (operation) => {
        asked.push(operation);
        // The lease ends while the first attempt waits out its Retry-After.
        if (calls > 0) throw refused;
      },
    });
    await c.get(cm, "ns", "a");
    assert.deepEqual(asked, [], "reads pass unasked");
    await assert.rejects(c.create(cm, obj), (e: unknown) => e === refused);
    assert.deepEqual(asked, ["create ConfigMap ns/a", "create ConfigMap ns/a"]);
    assert.equal(calls, 1, "the re-send after Retry-After is refused unsent");
    await assert.rejects(c.delete(cm, "ns", "a"), (e: unknown) => e === refused);
    assert.equal(calls, 1);
    c.close();
  });

  void it("fails with a retryable Timeout when the server does not answer in time", async () => {
    handler = () => undefined; // never answers
    const c = await client({ timeoutMs: 100 });
    await assert.rejects(
      c.get(cm, "ns", "a"),
      (e: unknown) => e instanceof KubeApiError && e.reason === "Timeout" && e.status === 0 && e.retryable,
    );
    c.close();
    server.closeAllConnections();
  });

  void it("rejects with the abort reason when the caller aborts", async () => {
    handler = () => undefined;
    const c = await client();
    const abort = new AbortController();
    const pending = c.get(cm, "ns", "a", { signal: abort.signal });
    abort.abort(new Error("shutting down"));
    await assert.rejects(pending, /shutting down/);
    c.close();
    server.closeAllConnections();
  });

  void it("refuseRequests() fails a request in flight at once, and every later one without sending it, as a retryable network error", async () => {
    seen.length = 0;
    let arrived: () => void = () => undefined;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    // The server never answers: a hung API server.
    handler = () => arrived();
    // A cut that failed would end the request at this timeout, with its own message.
    const c = await client({ timeoutMs: 5_000 });
    const refusal = (e: unknown): boolean =>
      e instanceof KubeApiError && e.status === 0 && e.retryable && /refuses requests/.test(e.message);
    const pending = c.create(cm, obj);
    await arrival;
    c.refuseRequests();
    await assert.rejects(pending, refusal);
    await assert.rejects(c.get(cm, "ns", "a"), refusal);
    await assert.rejects(c.create(cm, obj), refusal);
    const watching = c.watch(cm, { resourceVersion: "1", signal: new AbortController().signal });
    await assert.rejects(watching.next(), refusal);
    assert.equal(seen.length, 1, "a request after refuseRequests() reached the server");
    c.close();
    server.closeAllConnections();
  });

  void it("a credential plugin that stops answering fails the request at its timeout, or at once on refuseRequests(), instead of holding it for ever", async () => {
    seen.length = 0;
    // Every token is refused, so each request reads the credentials again.
    handler = (_req, res) => status(res, 401, "Unauthorized", "Unauthorized");
    const dir = await mkdtemp(join(tmpdir(), "driftless-exec-"));
    const plugin = join(dir, "plugin.sh");
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      // Already expired, so client-node runs the plugin again at every read.
      status: { token: "plugin-token", expirationTimestamp: "2000-01-01T00:00:00Z" },
    });
    // Answers its first two calls (one per client below), then hangs (long past every deadline of this test).
    await writeFile(
      plugin,
      [
        "#!/bin/sh",
        `n=$(ls "${dir}" | grep -c '^call-')`,
        `touch "${dir}/call-$n"`,
        'if [ "$n" -ge 2 ]; then exec sleep 3; fi',
        `echo '${credential}'`,
      ].join("\n"),
      { mode: 0o755 },
    );
    const calls = async (n: number): Promise<void> => {
      while (!(await readdir(dir)).includes(`call-${n - 1}`)) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    const kc = new KubeConfig();
    const { port } = server.address() as AddressInfo;
    kc.loadFromOptions({
      clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: false }],
      users: [
        {
          name: "u",
          exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" },
        },
      ],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const timed = await KubeClient.fromConfig(kc, { timeoutMs: 300 });
    const cut = await KubeClient.fromConfig(kc, { timeoutMs: 60_000 });
    try {
      const started = performance.now();
      await assert.rejects(
        timed.get(cm, "ns", "a"),
        (e: unknown) => e instanceof KubeApiError && e.retryable && /credential/.test(e.message),
      );
      assert.ok(performance.now() - started < 2_000, "the request waited past its timeout for credentials");

      const pending = cut.get(cm, "ns", "a");
      await calls(4); // its read of the credentials after the 401 hangs in the plugin
      cut.refuseRequests();
      await assert.rejects(pending, (e: unknown) => e instanceof KubeApiError && /refuses requests/.test(e.message));
    } finally {
      timed.close();
      cut.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it("re-sends once on a fresh socket when a kept-alive socket was closed by the server", async () => {
    seen.length = 0;
    const sockets = new Set<unknown>();
    let dropped = 0;
    handler = (req, res) => {
      // The second request on a socket finds it closing: the server drops it unanswered.
      if (sockets.has(req.socket) && dropped === 0) {
        dropped += 1;
        (req.socket as { destroy(): void }).destroy();
        return;
      }
      sockets.add(req.socket);
      json(res, { ...obj, metadata: { ...obj.metadata, resourceVersion: String(seen.length) } });
    };
    const c = await client({ maxSockets: 1 });
    await c.get(cm, "ns", "a");
    const second = await c.get(cm, "ns", "a");
    assert.equal(dropped, 1);
    assert.equal(second?.metadata.resourceVersion, "3", "answered on the retry");
    c.close();
  });

  void it("reports Warning headers", async () => {
    handler = (_req, res) => json(res, obj, { warning: '299 - "unknown field \\"spec.foo\\""' });
    const warnings: string[] = [];
    const c = await client({ onWarning: (w) => warnings.push(w) });
    await c.get(cm, "ns", "a");
    assert.deepEqual(warnings, ['unknown field "spec.foo"']);
    c.close();
  });

  void it("follows continue tokens and fills kind/apiVersion on items", async () => {
    seen.length = 0;
    handler = (req, res) => {
      const url = new URL(req.url, "http://x");
      const token = url.searchParams.get("continue");
      const page = token === null ? 0 : Number(token);
      json(res, {
        kind: "ConfigMapList",
        apiVersion: "v1",
        metadata: { resourceVersion: "42", ...(page < 2 ? { continue: String(page + 1) } : {}) },
        items: [{ metadata: { name: `cm-${page}`, namespace: "ns" } }],
      });
    };
    const c = await client();
    const list = await c.list(cm, { namespace: "ns", pageSize: 1, labelSelector: "a=b" });
    assert.deepEqual(
      list.items.map((i) => [i.kind, i.apiVersion, i.metadata.name]),
      [
        ["ConfigMap", "v1", "cm-0"],
        ["ConfigMap", "v1", "cm-1"],
        ["ConfigMap", "v1", "cm-2"],
      ],
    );
    assert.equal(list.resourceVersion, "42");
    assert.equal(seen[0]?.url, "/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db&limit=1");
    assert.equal(seen[1]?.url, "/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db&limit=1&continue=1");
    c.close();
  });

  void it("reads the rest in one piece when a continue token expires", async () => {
    seen.length = 0;
    handler = (req, res) => {
      const url = new URL(req.url, "http://x");
      if (url.searchParams.get("continue") !== null)
        return status(res, 410, "Expired", "The provided continue parameter is too old");
      const limit = url.searchParams.get("limit");
      if (limit === "1")
        return json(res, { metadata: { resourceVersion: "5", continue: "x" }, items: [{ metadata: { name: "a" } }] });
      return json(res, {
        metadata: { resourceVersion: "9" },
        items: [{ metadata: { name: "a" } }, { metadata: { name: "b" } }],
      });
    };
    const c = await client();
    const list = await c.list(cm, { pageSize: 1 });
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ["a", "b"],
    );
    assert.equal(list.resourceVersion, "9");
    assert.equal(seen.length, 3);
    c.close();
  });

  void it("streams watch events as they arrive and ends quietly on abort", async () => {
    let push: ((line: string) => void) | undefined;
    handler = (req, res) => {
      assert.match(req.url, /watch=1&resourceVersion=10&allowWatchBookmarks=true&timeoutSeconds=60/);
      res.writeHead(200, { "content-type": "application/json" });
      push = (line) => res.write(line);
      res.write(
        '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"11"}}}\n{"type":"MODI',
      );
    };
    const c = await client();
    const abort = new AbortController();
    const types: string[] = [];
    for await (const event of c.watch(cm, {
      namespace: "ns",
      resourceVersion: "10",
      timeoutSeconds: 60,
      signal: abort.signal,
    })) {
      types.push(`${event.type}`);
      if (types.length === 1)
        push?.(
          'FIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"12"}}}\n',
        );
      if (types.length === 2) abort.abort();
    }
    assert.deepEqual(types, ["ADDED", "MODIFIED"]);
    assert.equal(c.requests.count("watch"), 1);
    c.close();
  });

  void it("throws a classified error when a watch is refused, and yields ERROR events as they come", async () => {
    handler = (req, res) => {
      if (req.url.includes("resourceVersion=1&")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (20)","reason":"Expired","code":410}}\n',
        );
      } else status(res, 403, "Forbidden", "configmaps is forbidden");
    };
    const c = await client();
    const signal = new AbortController().signal;
    const events = [];
    for await (const e of c.watch(cm, { resourceVersion: "1", signal })) events.push(e);
    assert.equal(events[0]?.type, "ERROR");
    assert.ok(isGone(KubeApiError.fromStatus(events[0]?.object ?? {}, 0, "watch")));
    await assert.rejects(
      (async () => {
        for await (const _ of c.watch(cm, { resourceVersion: "2", signal })) void _;
      })(),
      (e: unknown) => e instanceof KubeApiError && e.status === 403 && e.code === "KNV2013",
    );
    c.close();
  });
});
