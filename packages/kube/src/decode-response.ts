/**
 * Decoding a response: a 2xx body into an object or its metadata, anything else (a non-2xx
 * answer, a body that is not what was asked for, a failed exchange) into a classified KubeApiError.
 */
import type { ErrorResource } from "@driftless/api";
import { KubeApiError, KubeReason } from "./errors.ts";
import { peekMemberRange } from "./json-peek.ts";
import { asApiStatus, asKubeObject, type TypeFill } from "./parse.ts";
import { apiVersionOf } from "./paths.ts";
import { prefixScanBytes, RequestTimeoutError, type RawResponse } from "./transport.ts";
import type { KubeObject, ResourceMapping } from "./types.ts";

/** What a request is about, for error messages and errorResources. */
export interface Subject {
  readonly operation: string;
  readonly resource?: ErrorResource;
}

export function typeFill(m: ResourceMapping): TypeFill {
  return { apiVersion: apiVersionOf(m.group, m.version), kind: m.kind };
}

export function parseJson(raw: RawResponse, subject: Subject): unknown {
  try {
    return JSON.parse(raw.body.toString("utf8"));
  } catch (error) {
    throw invalid(raw, subject, `not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

export function objectFrom(raw: RawResponse, m: ResourceMapping, subject: Subject): KubeObject {
  if (raw.status >= 300) throw errorFrom(raw, subject);
  const obj = asKubeObject(parseJson(raw, subject), typeFill(m));
  if (obj === undefined) throw invalid(raw, subject, "not a Kubernetes object");
  return obj;
}

/** Whether a body's start holds the whole metadata member (the transport may drop the rest). */
export function holdsMetadata(prefix: Buffer): boolean {
  return peekMemberRange(prefix.toString("latin1"), "metadata") !== undefined;
}

/** The stored object's apiVersion, kind and metadata; the rest of the response is never parsed or kept. */
export function metadataFrom(raw: RawResponse, m: ResourceMapping, subject: Subject): KubeObject {
  // metadata comes before spec and status in what the server writes: the scan stops there, and
  // only its bytes are decoded, not the megabytes after it.
  const range =
    peekMemberRange(raw.body.toString("latin1", 0, Math.min(raw.body.length, prefixScanBytes)), "metadata") ??
    peekMemberRange(raw.body.toString("latin1"), "metadata");
  if (range === undefined) throw invalid(raw, subject, "not a Kubernetes object");
  const metadata = raw.body.toString("utf8", range.start, range.end);
  let parsed: unknown;
  try {
    parsed = JSON.parse(metadata);
  } catch (error) {
    throw invalid(raw, subject, `not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const obj = asKubeObject({ metadata: parsed }, typeFill(m));
  if (obj === undefined) throw invalid(raw, subject, "not a Kubernetes object");
  return obj;
}

export function invalid(raw: RawResponse, subject: Subject, why: string): KubeApiError {
  return new KubeApiError({
    status: raw.status,
    reason: KubeReason.InvalidResponse,
    serverMessage: `the response is ${why}: ${raw.body.toString("utf8", 0, 200)}`,
    operation: subject.operation,
    ...(subject.resource === undefined ? {} : { resource: subject.resource }),
  });
}

/** The classified error for a non-2xx response. */
export function errorFrom(raw: RawResponse, subject: Subject): KubeApiError {
  const extra = {
    ...(subject.resource === undefined ? {} : { resource: subject.resource }),
    ...(retryAfterMs(raw) === undefined ? {} : { retryAfterMs: retryAfterMs(raw) }),
  };
  const contentType = raw.headers["content-type"] ?? "";
  if (contentType.startsWith("application/json")) {
    let body: unknown;
    try {
      body = JSON.parse(raw.body.toString("utf8"));
    } catch {
      body = undefined;
    }
    const status = asApiStatus(body);
    if (status !== undefined) return KubeApiError.fromStatus(status, raw.status, subject.operation, extra);
  }
  return KubeApiError.fromHttp(raw.status, raw.body.toString("utf8"), subject.operation, extra);
}

export function networkError(error: unknown, subject: Subject): KubeApiError {
  if (error instanceof KubeApiError) return error;
  return KubeApiError.network(
    subject.operation,
    error,
    error instanceof RequestTimeoutError ? KubeReason.Timeout : KubeReason.NetworkError,
  );
}

export function retryAfterMs(raw: RawResponse): number | undefined {
  const header = raw.headers["retry-after"];
  if (header === undefined) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}
