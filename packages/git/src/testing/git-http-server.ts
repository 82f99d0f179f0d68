import { execFileSync, spawn } from "node:child_process";
import { createServer as createHttpServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/**
 * Test-only: a real git smart-HTTP server on 127.0.0.1. Each request runs `git http-backend`
 * (shipped with git) as a CGI program, behind optional Basic auth and optional TLS, as a hosting
 * service would. The protocol-v2 header can be withheld to make the backend speak protocol v0,
 * which refuses to serve commits by SHA (like older servers).
 */
export interface GitHttpServerOptions {
  /** Directory holding bare repositories; the URL path is relative to it. */
  readonly projectRoot: string;
  /** When set, every request needs Basic auth with exactly these. */
  readonly username?: string;
  readonly token?: string;
  /** When set, every request needs a Cookie header carrying exactly this `name=value` pair (a cookie-guarded host). */
  readonly cookie?: string;
  /** Default true. */
  readonly protocolV2?: boolean;
  readonly tls?: { readonly key: string; readonly cert: string };
  /** The address to listen on (default 127.0.0.1), e.g. a node bridge's, for pods to fetch from. */
  readonly host?: string;
  /** The port (default a free one): a server started again on the old one serves the same URLs. */
  readonly port?: number;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly authorized: boolean;
}

export interface GitHttpServer {
  readonly port: number;
  /** `http(s)://<host>:<port>/<path>`. */
  url(path: string): string;
  readonly requests: RecordedRequest[];
  /** Answer the next `count` requests with `status` instead of serving them. */
  failNext(status: number, count: number): void;
  /** Accept requests from now on (those `which` picks, default all) but never answer them, like a wedged server. */
  stall(which?: (request: { readonly method: string; readonly path: string }) => boolean): void;
  close(): Promise<void>;
}

const httpBackend = join(execFileSync("git", ["--exec-path"], { encoding: "utf8" }).trim(), "git-http-backend");

export async function startGitHttpServer(options: GitHttpServerOptions): Promise<GitHttpServer> {
  const requests: RecordedRequest[] = [];
  let failures: { status: number; count: number } = { status: 0, count: 0 };
  let stalled: ((request: { readonly method: string; readonly path: string }) => boolean) | undefined;

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const authorized = checkAuth(req, options);
    const record = (status: number): void => {
      requests.push({ method: req.method ?? "", path: url.pathname + url.search, status, authorized });
    };
    if (stalled?.({ method: req.method ?? "", path: url.pathname }) === true) {
      record(0);
      return;
    }
    if (failures.count > 0) {
      failures = { ...failures, count: failures.count - 1 };
      record(failures.status);
      res.writeHead(failures.status, { "Content-Type": "text/plain" }).end("injected failure\n");
      return;
    }
    if (!authorized) {
      record(401);
      res
        .writeHead(401, { "WWW-Authenticate": 'Basic realm="driftless-test"', "Content-Type": "text/plain" })
        .end("no\n");
      return;
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_PROJECT_ROOT: options.projectRoot,
      GIT_HTTP_EXPORT_ALL: "1",
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ""),
      REQUEST_METHOD: req.method ?? "GET",
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
      REMOTE_USER: options.username ?? "",
    };
    if (req.headers["content-length"] !== undefined) env.CONTENT_LENGTH = req.headers["content-length"];
    const encoding = req.headers["content-encoding"];
    if (encoding !== undefined) env.HTTP_CONTENT_ENCODING = encoding;
    const protocol = req.headers["git-protocol"];
    if (options.protocolV2 !== false && typeof protocol === "string") env.GIT_PROTOCOL = protocol;

    const child = spawn(httpBackend, [], { env, stdio: ["pipe", "pipe", "ignore"] });
    req.pipe(child.stdin);
    child.stdin.on("error", () => undefined);
    let head = Buffer.alloc(0);
    let headersSent = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersSent) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) return;
      const { status, headers } = parseCgiHeaders(head.subarray(0, end).toString("latin1"));
      record(status);
      res.writeHead(status, headers);
      headersSent = true;
      res.write(head.subarray(end + 4));
    });
    child.stdout.on("end", () => {
      if (!headersSent) {
        record(500);
        res.writeHead(500).end();
      } else {
        res.end();
      }
    });
  };

  const server: Server = options.tls === undefined ? createHttpServer(handle) : createHttpsServer(options.tls, handle);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const scheme = options.tls === undefined ? "http" : "https";
  return {
    port,
    url: (path) => `${scheme}://${options.host ?? "127.0.0.1"}:${String(port)}/${path.replace(/^\//, "")}`,
    requests,
    failNext: (status, count) => {
      failures = { status, count };
    },
    stall: (which = () => true) => {
      stalled = which;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function checkAuth(req: IncomingMessage, options: GitHttpServerOptions): boolean {
  if (options.cookie !== undefined) {
    const cookies = (req.headers.cookie ?? "").split(";").map((pair) => pair.trim());
    if (!cookies.includes(options.cookie)) return false;
  }
  if (options.token === undefined) return true;
  const header = req.headers.authorization ?? "";
  const match = /^Basic (.+)$/.exec(header);
  if (match?.[1] === undefined) return false;
  return Buffer.from(match[1], "base64").toString("utf8") === `${options.username ?? ""}:${options.token}`;
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon === -1) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
    else headers[name] = value;
  }
  return { status, headers };
}
