/**
 * The push webhook receiver: `POST /webhook` from GitHub, GitLab or the generic signed form.
 * Only a verified request does anything (401 otherwise); a verified push gets the matching syncs
 * an immediate fetch. Polling stays the fallback, so a lost webhook only costs latency.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "@driftless/sync";
import { parseWebhook, providerOf, verify, type Push, type WebhookProvider } from "./webhook-push.ts";

export const WebhookResult = {
  Accepted: "accepted",
  Ignored: "ignored",
  Unauthorized: "unauthorized",
  Invalid: "invalid",
  Unavailable: "unavailable",
} as const;
export type WebhookResult = (typeof WebhookResult)[keyof typeof WebhookResult];

export interface WebhookServerOptions {
  /** 0 picks a free port. */
  readonly port: number;
  readonly host?: string;
  readonly secret: string;
  /** Triggers the syncs a push concerns; returns how many. Throws when the queue is unreachable. */
  readonly onPush: (push: Push, provider: WebhookProvider) => Promise<number>;
  readonly onResult?: (provider: WebhookProvider, result: WebhookResult) => void;
  readonly log: Logger;
}

export interface WebhookServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Push payloads are small; anything larger is refused before it is buffered. */
const maxBodyBytes = 1024 * 1024;

class BodyTooLarge extends Error {}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        // Stop keeping it; the rest is read and dropped so the 413 reaches the sender.
        chunks.length = 0;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

function reply(response: ServerResponse, status: number, body: Record<string, unknown>): void {
  const text = `${JSON.stringify(body)}\n`;
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

export async function serveWebhooks(options: WebhookServerOptions): Promise<WebhookServer> {
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (path !== "/webhook" && !path.startsWith("/webhook/")) return reply(response, 404, { status: "not found" });
    if (request.method !== "POST") {
      response.setHeader("allow", "POST");
      return reply(response, 405, { status: "method not allowed" });
    }
    const provider = providerOf(request.headers);
    const done = (status: number, result: WebhookResult, body: Record<string, unknown>): void => {
      options.onResult?.(provider, result);
      reply(response, status, { status: result, ...body });
    };
    let body: Buffer;
    try {
      body = await readBody(request);
    } catch (error) {
      if (error instanceof BodyTooLarge)
        return done(413, WebhookResult.Invalid, { detail: `body over ${maxBodyBytes} bytes` });
      throw error;
    }
    if (!verify(provider, request.headers, body, options.secret)) {
      options.log.warn("refused a webhook request with a missing or wrong signature", {
        provider,
        remote: request.socket.remoteAddress,
      });
      return done(401, WebhookResult.Unauthorized, {});
    }
    const parsed = parseWebhook(provider, request.headers, body);
    if (parsed.kind === "invalid") return done(400, WebhookResult.Invalid, { detail: parsed.why });
    if (parsed.kind === "ignored") return done(202, WebhookResult.Ignored, { detail: parsed.why });
    let matched: number;
    try {
      matched = await options.onPush(parsed.push, provider);
    } catch (error) {
      options.log.warn("could not trigger syncs for a push", { provider, error: String(error) });
      // The sender retries on 5xx; polling catches up meanwhile.
      return done(503, WebhookResult.Unavailable, { detail: "the queue is unavailable" });
    }
    options.log.info("webhook push", {
      provider,
      branch: parsed.push.branch,
      commit: parsed.push.commit,
      syncs: matched,
    });
    return done(202, WebhookResult.Accepted, { syncs: matched });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.log.error("webhook handler failed", { error: String(error) });
      if (!response.headersSent) reply(response, 500, { status: "error" });
      else response.destroy();
    });
  });
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
        server.closeAllConnections();
      }),
  };
}
