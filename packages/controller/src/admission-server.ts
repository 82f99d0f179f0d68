/**
 * The admission webhook's HTTPS endpoint: `POST /admission-webhook` with an `admission.k8s.io/v1`
 * AdmissionReview, answered with the decision of admission-review.ts. Only the API server calls it
 * (it is the one holding the CA), with a 3 s timeout; the certificate can be swapped while serving.
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "@driftless/sync";
import { reviewAdmissionInCluster, type AdmissionLookups, type AdmissionRequest } from "./admission-review.ts";
import { BodyIncomplete, BodyTooLarge, readBody } from "./webhook-body.ts";

export const AdmissionWebhookPath = "/admission-webhook";

/** An AdmissionReview holds the object twice (old and new); etcd keeps objects up to 1.5 MiB. */
const maxBodyBytes = 8 * 1024 * 1024;
const readTimeoutMs = 10_000;

export interface AdmissionServerOptions {
  readonly port: number;
  readonly host?: string;
  readonly tls: { readonly cert: string; readonly key: string };
  readonly lookups: AdmissionLookups;
  readonly log: Logger;
}

export interface AdmissionServer {
  readonly port: number;
  /** Serves a renewed certificate to new connections. */
  setCertificate(tls: { readonly cert: string; readonly key: string }): void;
  close(): Promise<void>;
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: AdmissionServerOptions,
): Promise<void> {
  const log = options.log;
  const path = new URL(request.url ?? "/", "https://localhost").pathname;
  if (path !== AdmissionWebhookPath) return reply(response, 404, { status: "not found" });
  if (request.method !== "POST") return reply(response, 405, { status: "method not allowed" });
  let body: Buffer;
  try {
    body = await readBody(request, maxBodyBytes);
  } catch (error) {
    if (error instanceof BodyTooLarge) return reply(response, 413, { status: "too large" });
    if (error instanceof BodyIncomplete) return;
    throw error;
  }
  let review: { apiVersion?: string; request?: AdmissionRequest };
  try {
    review = JSON.parse(body.toString("utf8")) as typeof review;
  } catch {
    return reply(response, 400, { status: "not JSON" });
  }
  const admission = review.request;
  if (admission === undefined || typeof admission.uid !== "string")
    return reply(response, 400, { status: "not an AdmissionReview request" });
  const decision = await reviewAdmissionInCluster(admission, options.lookups);
  if (!decision.allowed)
    log.info("admission refused", {
      user: admission.userInfo?.username,
      operation: admission.operation,
      kind: admission.kind?.kind,
      message: decision.message,
    });
  reply(response, 200, {
    apiVersion: review.apiVersion ?? "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: decision.allowed
      ? { uid: admission.uid, allowed: true }
      : {
          uid: admission.uid,
          allowed: false,
          status: { code: 403, reason: decision.reason, message: decision.message },
        },
  });
}

export async function serveAdmission(options: AdmissionServerOptions): Promise<AdmissionServer> {
  const server: Server = createServer(
    {
      cert: options.tls.cert,
      key: options.tls.key,
      minVersion: "TLSv1.2",
      headersTimeout: readTimeoutMs,
      requestTimeout: readTimeoutMs,
    },
    (request, response) => {
      handle(request, response, options).catch((error: unknown) => {
        // The API server then applies failurePolicy (Ignore): the write goes through.
        options.log.error("admission handler failed", { error: String(error) });
        if (!response.headersSent) reply(response, 500, { status: "error" });
        else response.destroy();
      });
    },
  );
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
    setCertificate: (tls) => server.setSecureContext({ cert: tls.cert, key: tls.key, minVersion: "TLSv1.2" }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}
