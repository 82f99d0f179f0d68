/**
 * `driftless console`'s HTTP server: loopback only, every request proven by the per-run secret
 * (security.ts), every read from the watch caches (watches.ts) and every action a patch made with the
 * user's own client, so the API server's RBAC answers (sync-actions.ts). Views are server-rendered
 * HTML; /live pushes a view's new HTML over server-sent events when the caches change.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isSuspended } from "@driftless/api";
import { KubeApiError, type KubeClient, type KubeObject } from "@driftless/kube";
import { act, isSyncAction, SyncAction } from "../sync-actions.ts";
import type { SyncRef } from "../sync-objects.ts";
import { syncReport } from "../sync-report.ts";
import { consoleScript, consoleStyle } from "./assets.ts";
import { html, type Html } from "./html.ts";
import { page, syncPath, time } from "./layout.ts";
import { overviewFilters, overviewLive, overviewQuery } from "./overview-view.ts";
import {
  csrfToken,
  hostAllowed,
  newSecret,
  sameOrigin,
  sameSecret,
  secretPrefix,
  securityHeaders,
  splitSecretPath,
} from "./security.ts";
import { syncLive, syncTop } from "./sync-view.ts";
import { DetailWatches, reconcilerName, SyncWatches, type DetailWatch } from "./watches.ts";

export interface ConsoleOptions {
  /** The user's own client: the console has no identity of its own. */
  readonly client: KubeClient;
  /** Only the syncs of this namespace (for users who may not list them cluster-wide). */
  readonly namespace?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Fixed for tests; a fresh random one otherwise. */
  readonly secret?: string;
}

/**
 * How long a page waits at most for the first list of a watch before rendering what it has; a watch the
 * API server refuses (or a server that is down) settles at its first failure, which the page shows.
 */
const firstListMs = 5_000;
/** At most one pushed view per connection this often: status writes come in bursts. */
const pushEveryMs = 250;
const heartbeatMs = 20_000;

interface View {
  readonly title: string;
  readonly top: Html;
  readonly live: () => Html;
}

export class ConsoleServer {
  readonly port: number;
  readonly #secret: string;
  readonly #csrf: string;
  readonly #options: ConsoleOptions;
  readonly #server: Server;
  readonly #syncs: SyncWatches;
  readonly #details: DetailWatches;
  readonly #streams = new Set<ServerResponse>();

  private constructor(options: ConsoleOptions, server: Server, port: number, secret: string) {
    this.#options = options;
    this.#server = server;
    this.port = port;
    this.#secret = secret;
    this.#csrf = csrfToken(secret);
    this.#syncs = new SyncWatches(options.client, options.namespace);
    this.#details = new DetailWatches(options.client);
  }

  static async start(options: ConsoleOptions): Promise<ConsoleServer> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const console = new ConsoleServer(options, server, port, options.secret ?? newSecret());
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      console.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, "text/plain; charset=utf-8", `console error: ${String(error)}`);
        else res.end();
      });
    });
    return console;
  }

  /** The address to open: every path of the console starts with the secret. */
  get url(): string {
    return `http://127.0.0.1:${this.port}${secretPrefix(this.#secret)}`;
  }

  async close(): Promise<void> {
    for (const stream of this.#streams) stream.end();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await this.#details.stop();
    await this.#syncs.stop();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: a hostile name resolving to 127.0.0.1 still says its own name in Host.
    if (!hostAllowed(req.headers.host, this.port))
      return send(res, 403, "text/plain; charset=utf-8", "Host not allowed\n");
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
    const scoped = splitSecretPath(url.pathname);
    if (scoped === undefined) {
      return send(
        res,
        401,
        "text/plain; charset=utf-8",
        "Not signed in: open the address `driftless console` printed (it carries a secret).\n",
      );
    }
    if (!sameSecret(scoped.given, this.#secret)) return send(res, 403, "text/plain; charset=utf-8", "Wrong secret\n");
    // The pages' links are relative to the prefix with its slash.
    if (scoped.path === "") return redirect(res, `${url.pathname}/${url.search}`);
    url.pathname = scoped.path;
    if (req.method === "POST") return this.#post(req, res, url);
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "text/plain; charset=utf-8", "");
    if (url.pathname === "/static/console.js") return send(res, 200, "text/javascript; charset=utf-8", consoleScript);
    if (url.pathname === "/static/console.css") return send(res, 200, "text/css; charset=utf-8", consoleStyle);
    if (url.pathname === "/live") return this.#live(req, res, url.searchParams.get("view") ?? "/");
    return this.#page(res, url);
  }

  async #page(res: ServerResponse, url: URL, notice?: { status: number; html: Html }): Promise<void> {
    const ref = syncRefOf(url.pathname);
    if (url.pathname !== "/" && ref === undefined) return send(res, 404, "text/plain; charset=utf-8", "Not found\n");
    const held = ref === undefined ? undefined : this.#details.acquire(ref);
    try {
      await Promise.all([this.#syncs.settled(firstListMs), held?.watch.settled(firstListMs)]);
      const view = this.#view(url, held?.watch);
      const body = page({
        base: secretPrefix(this.#secret),
        title: view.title,
        view: `${url.pathname}${url.search}`,
        csrf: this.#csrf,
        top: view.top,
        live: view.live(),
        ...(notice === undefined ? {} : { notice: notice.html }),
      });
      send(
        res,
        notice?.status ?? (ref !== undefined && this.#absent(ref) ? 404 : 200),
        "text/html; charset=utf-8",
        body.text,
      );
    } finally {
      held?.release();
    }
  }

  /**
   * The sync is not among those its kind's watch listed (a refused watch lists nothing, and says so on the
   * page instead): the page answers 404, as the API server would, and still follows the cluster should it come.
   */
  #absent(ref: SyncRef): boolean {
    const state = this.#syncs.states().find((s) => s.kind === ref.kind)?.state;
    return state?.synced === true && state.error === undefined && this.#syncs.get(ref) === undefined;
  }

  #view(url: URL, detail: DetailWatch | undefined): View {
    const ref = syncRefOf(url.pathname);
    if (ref === undefined || detail === undefined) {
      const query = overviewQuery(url.searchParams);
      const namespacesOf = (syncs: readonly KubeObject[]): string[] =>
        [...new Set(syncs.map((s) => s.metadata.namespace ?? ""))].sort();
      return {
        title: "Syncs",
        top: overviewFilters(query, namespacesOf(this.#syncs.syncs())),
        live: () => {
          const states = this.#syncs.states();
          const syncs = this.#syncs.syncs();
          return overviewLive(
            {
              reports: syncs.map((s) => syncReport(s)),
              namespaces: namespacesOf(syncs),
              refusals: states.map((s) => ({ kind: s.kind, error: s.state.error })),
              loading: states.some((s) => !s.state.synced && s.state.error === undefined),
              suggestNamespace:
                this.#options.namespace === undefined &&
                states.some((s) => s.kind === "RepoSync" && s.state.refused === true),
            },
            query,
          );
        },
      };
    }
    const objectsPage = Number.parseInt(url.searchParams.get("objects") ?? "1", 10);
    return {
      title: `${ref.kind} ${ref.namespace}/${ref.name}`,
      top: syncTop(ref),
      live: () => {
        const sync = this.#syncs.get(ref);
        const group = detail.group.get(ref.namespace, ref.name);
        const syncState = this.#syncs.states().find((s) => s.kind === ref.kind)?.state ?? { synced: false };
        return syncLive({
          ref,
          sync,
          report: sync === undefined ? undefined : syncReport(sync, group ?? emptyGroupOf(ref)),
          syncState,
          groupState: detail.groupState(),
          events: detail.events.list(),
          eventState: detail.eventState(),
          pods: detail.pods.list(),
          podState: detail.podState(),
          reconcilerName: reconcilerName(ref),
          csrf: this.#csrf,
          objectsPage: Number.isFinite(objectsPage) ? objectsPage : 1,
        });
      },
    };
  }

  /** Server-sent events: the view's live HTML now, then again whenever it changes. */
  async #live(req: IncomingMessage, res: ServerResponse, viewPath: string): Promise<void> {
    if (!viewPath.startsWith("/") || viewPath.startsWith("//")) return send(res, 400, "text/plain; charset=utf-8", "");
    const url = new URL(viewPath, "http://console.invalid");
    const ref = syncRefOf(url.pathname);
    if (url.pathname !== "/" && ref === undefined) return send(res, 404, "text/plain; charset=utf-8", "");
    const held = ref === undefined ? undefined : this.#details.acquire(ref);
    res.writeHead(200, { ...securityHeaders, "Content-Type": "text/event-stream; charset=utf-8" });
    res.flushHeaders();
    this.#streams.add(res);
    const view = this.#view(url, held?.watch);
    let last = "";
    let timer: NodeJS.Timeout | undefined;
    let lastPush = 0;
    const push = (): void => {
      timer = undefined;
      lastPush = Date.now();
      const text = view.live().text;
      if (text === last) return;
      last = text;
      // EventSource ends a line at \r\n, \r or \n: so does this, or text could start a line of its own.
      res.write(
        `event: view\n${text
          .split(/\r\n|\r|\n/)
          .map((line) => `data: ${line}\n`)
          .join("")}\n`,
      );
    };
    const schedule = (): void => {
      timer ??= setTimeout(push, Math.max(0, lastPush + pushEveryMs - Date.now()));
    };
    const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), heartbeatMs);
    this.#syncs.on("change", schedule);
    held?.watch.on("change", schedule);
    req.once("close", () => {
      clearTimeout(timer);
      clearInterval(heartbeat);
      this.#syncs.off("change", schedule);
      held?.watch.off("change", schedule);
      held?.release();
      this.#streams.delete(res);
    });
    await Promise.all([this.#syncs.settled(firstListMs), held?.watch.settled(firstListMs)]);
    if (!res.writableEnded) push();
  }

  /** An action: same origin, the CSRF token, then the patch as the user; the API server's answer is shown. */
  async #post(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const body = await readBody(req, 8 * 1024);
    const form = new URLSearchParams(body);
    const header = req.headers["x-driftless-csrf"];
    const csrf = typeof header === "string" ? header : (form.get("csrf") ?? undefined);
    if (!sameOrigin(req.headers) || !sameSecret(csrf, this.#csrf))
      return send(res, 403, "text/plain; charset=utf-8", "Refused: not from this console's pages\n");
    const slash = url.pathname.lastIndexOf("/");
    const action = url.pathname.slice(slash + 1);
    const ref = syncRefOf(url.pathname.slice(0, slash));
    if (ref === undefined || !isSyncAction(action)) return send(res, 404, "text/plain; charset=utf-8", "Not found\n");
    const { notice, written } = await this.#act(ref, action);
    // With the script: only the notice (the live view follows). Without: the sync's page with it, rendered
    // once the watch has brought the write, or the page would offer Suspend on the sync just suspended.
    if (typeof header === "string") return send(res, notice.status, "text/html; charset=utf-8", notice.html.text);
    await this.#syncs.holds(ref, written, firstListMs);
    return this.#page(res, new URL(syncPath(ref), url), notice);
  }

  /** The notice for the page, and the resourceVersion the write left the sync at (none when refused). */
  async #act(
    ref: SyncRef,
    action: SyncAction,
  ): Promise<{ notice: { status: number; html: Html }; written?: string | undefined }> {
    const what = `${ref.kind} ${ref.namespace}/${ref.name}`;
    try {
      const result = await act(this.#options.client, ref, action);
      const done =
        action === SyncAction.Sync
          ? html`Pass requested for ${what} at
            ${time(result.request ?? "")}.${
              // As `driftless sync` warns: the pass of a suspended sync only compares.
              isSuspended(result.object.metadata.annotations)
                ? " It is suspended: its pass applies, prunes and corrects nothing until resumed."
                : ""
            }`
          : action === SyncAction.Suspend
            ? html`${what} suspended: nothing is applied, pruned or corrected until resumed.`
            : html`${what} resumed.`;
      return {
        notice: { status: 200, html: html`<p class="done">${done}</p>` },
        written: result.object.metadata.resourceVersion,
      };
    } catch (error) {
      return { notice: refusalNotice(error) };
    }
  }
}

/**
 * The notice for a failed action, with the API server's status; with no answer at all (KubeApiError's
 * status 0: refused connection, timeout) the console is a gateway that got nothing: 502.
 */
export function refusalNotice(error: unknown): { status: number; html: Html } {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof KubeApiError && error.status === 0)
    return {
      status: 502,
      html: html`<p class="refused" role="alert"><strong>The API server did not answer:</strong> ${message}</p>`,
    };
  const status = error instanceof KubeApiError ? error.status : 500;
  return {
    status,
    html: html`<p class="refused" role="alert"><strong>The API server refused (${status}):</strong> ${message}</p>`,
  };
}

/** `/syncs/rootsync/NS/NAME` and `/syncs/reposync/NS/NAME`. */
export function syncRefOf(path: string): SyncRef | undefined {
  const match = /^\/syncs\/(rootsync|reposync)\/([^/]+)\/([^/]+)$/.exec(path);
  if (match === null) return undefined;
  const [, kind, namespace, name] = match;
  if (kind === undefined || namespace === undefined || name === undefined) return undefined;
  try {
    return {
      kind: kind === "rootsync" ? "RootSync" : "RepoSync",
      namespace: decodeURIComponent(namespace),
      name: decodeURIComponent(name),
    };
  } catch {
    return undefined;
  }
}

function emptyGroupOf(ref: SyncRef): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string };
} {
  return {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name: ref.name, namespace: ref.namespace },
  };
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...securityHeaders, "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(308, { ...securityHeaders, Location: location, "Content-Length": 0 });
  res.end();
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      text += chunk;
      if (text.length > limit) {
        reject(new Error("request body too large"));
        req.destroy();
      }
    });
    req.once("end", () => resolve(text));
    req.once("error", reject);
  });
}
