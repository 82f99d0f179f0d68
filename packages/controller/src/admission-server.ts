/**
 * The admission webhook's HTTPS endpoint: `POST /admission-webhook` with an `admission.k8s.io/v1`
 * AdmissionReview, answered with the decision of admission-review.ts. Only the API server calls it
 * (it is the one holding the CA), with a 3 s timeout; the certificate can be swapped while serving.
 * Anyone who reaches the port can connect, so bodies are capped in size, in JSON tokens and in bytes read
 * at once (admission-capacity.ts), and connections in number and time (@driftless/metrics' limits).
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connectionLimits, connectionServerOptions, limitConnections, type ConnectionLimits } from "@driftless/metrics";
import type { Logger } from "@driftless/sync";
import { AdmissionCapacity, DefaultAdmissionLimits, type AdmissionLimits } from "./admission-capacity.ts";
import {
  namespaceToRecheck,
  reviewAdmission,
  settleInCluster,
  type AdmissionDecision,
  type AdmissionLookups,
  type AdmissionRequest,
} from "./admission-review.ts";
import { jsonTokensExceed } from "./json-tokens.ts";
import { BodyIncomplete, BodyTooLarge, readBody } from "./webhook-body.ts";

export const AdmissionWebhookPath = "/admission-webhook";

export interface AdmissionServerOptions {
  readonly port: number;
  readonly host?: string;
  readonly tls: { readonly cert: string; readonly key: string };
  readonly lookups: AdmissionLookups;
  readonly log: Logger;
  readonly limits?: Partial<AdmissionLimits>;
  readonly connectionLimits?: Partial<ConnectionLimits>;
}

export interface AdmissionServer {
  readonly port: number;
  /** Serves a renewed certificate to new connections. */
  setCertificate(tls: { readonly cert: string; readonly key: string }): void;
  close(): Promise<void>;
}

function reply(response: ServerResponse, status: number, body: unknown, close = false): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    // Node closes the socket once this is sent, so an unread body is never drained.
    ...(close ? { connection: "close" } : {}),
  });
  response.end(text);
}

/** A review read and decided; holds none of the objects, so they can be freed while the cluster is asked. */
type Reviewed =
  | { readonly kind: "invalid"; readonly status: 400 | 413; readonly why: string }
  | {
      readonly kind: "decided";
      readonly uid: string;
      readonly apiVersion: string;
      readonly decision: AdmissionDecision;
      readonly recheck: string | undefined;
      readonly who: Record<string, unknown>;
    };

function review(body: Buffer, maxJsonTokens: number): Reviewed {
  if (jsonTokensExceed(body, maxJsonTokens))
    return { kind: "invalid", status: 413, why: `more than ${maxJsonTokens} JSON tokens` };
  let parsed: { apiVersion?: string; request?: AdmissionRequest };
  try {
    parsed = JSON.parse(body.toString("utf8")) as typeof parsed;
  } catch {
    return { kind: "invalid", status: 400, why: "not JSON" };
  }
  const admission = parsed.request;
  if (admission === undefined || typeof admission.uid !== "string")
    return { kind: "invalid", status: 400, why: "not an AdmissionReview request" };
  const decision = reviewAdmission(admission);
  return {
    kind: "decided",
    uid: admission.uid,
    apiVersion: parsed.apiVersion ?? "admission.k8s.io/v1",
    decision,
    recheck: namespaceToRecheck(admission, decision),
    who: { user: admission.userInfo?.username, operation: admission.operation, kind: admission.kind?.kind },
  };
}

function announcedLength(request: IncomingMessage): number | undefined {
  const header = request.headers["content-length"];
  return header === undefined ? undefined : Number(header);
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: AdmissionServerOptions,
  limits: AdmissionLimits,
  capacity: AdmissionCapacity,
): Promise<void> {
  const path = new URL(request.url ?? "/", "https://localhost").pathname;
  if (path !== AdmissionWebhookPath) return reply(response, 404, { status: "not found" });
  if (request.method !== "POST") return reply(response, 405, { status: "method not allowed" });
  const announced = announcedLength(request);
  if (announced !== undefined && announced > limits.maxBodyBytes)
    return reply(response, 413, { status: "too large" }, true);
  const ticket = capacity.tryAdmit(announced);
  if (ticket === undefined) {
    // The API server applies failurePolicy (Ignore) and records the webhook as failed open.
    response.setHeader("retry-after", "1");
    return reply(response, 429, { status: "busy" }, true);
  }
  response.once("close", ticket.release);
  let reviewed: Reviewed;
  try {
    // No local keeps the body: it is garbage once reviewed.
    reviewed = review(await readBody(request, limits.maxBodyBytes), limits.maxJsonTokens);
  } catch (error) {
    if (error instanceof BodyTooLarge) return reply(response, 413, { status: "too large" }, true);
    if (error instanceof BodyIncomplete) return;
    throw error;
  } finally {
    ticket.releaseBytes();
  }
  if (reviewed.kind === "invalid") return reply(response, reviewed.status, { status: reviewed.why });
  const decision = await settleInCluster(reviewed.decision, reviewed.recheck, options.lookups);
  if (!decision.allowed) options.log.info("admission refused", { ...reviewed.who, message: decision.message });
  reply(response, 200, {
    apiVersion: reviewed.apiVersion,
    kind: "AdmissionReview",
    response: decision.allowed
      ? { uid: reviewed.uid, allowed: true }
      : {
          uid: reviewed.uid,
          allowed: false,
          status: { code: 403, reason: decision.reason, message: decision.message },
        },
  });
}

export async function serveAdmission(options: AdmissionServerOptions): Promise<AdmissionServer> {
  const limits: AdmissionLimits = { ...DefaultAdmissionLimits, ...options.limits };
  const capacity = new AdmissionCapacity(limits);
  // The API server sends a review at once and waits 3 s (timeoutSeconds) for the answer.
  const connections = connectionLimits({ requestTimeoutMs: 10_000, ...options.connectionLimits });
  const server: Server = createServer(
    {
      cert: options.tls.cert,
      key: options.tls.key,
      minVersion: "TLSv1.2",
      ...connectionServerOptions(connections),
    },
    (request, response) => {
      handle(request, response, options, limits, capacity).catch((error: unknown) => {
        // The API server then applies failurePolicy (Ignore): the write goes through.
        options.log.error("admission handler failed", { error: String(error) });
        if (!response.headersSent) reply(response, 500, { status: "error" });
        else response.destroy();
      });
    },
  );
  limitConnections(server, connections);
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
