/**
 * API server failures as classified errors. The class tells a caller what to do (retry, report,
 * wait); `reason` is the Kubernetes StatusReason so callers can branch on NotFound, Conflict,
 * AlreadyExists... without parsing messages.
 */
import { DriftlessError, ErrorClass, KnvCode, type ErrorResource } from "@driftless/api";
import type { ApiStatus, StatusDetails } from "./types.ts";

/** Kubernetes StatusReason values, plus the client-side ones for failures with no response. */
export const KubeReason = {
  BadRequest: "BadRequest",
  Unauthorized: "Unauthorized",
  Forbidden: "Forbidden",
  NotFound: "NotFound",
  MethodNotAllowed: "MethodNotAllowed",
  NotAcceptable: "NotAcceptable",
  AlreadyExists: "AlreadyExists",
  Conflict: "Conflict",
  Gone: "Gone",
  /** What the server says with 410 for a too-old resourceVersion or continue token. */
  Expired: "Expired",
  RequestEntityTooLarge: "RequestEntityTooLarge",
  UnsupportedMediaType: "UnsupportedMediaType",
  Invalid: "Invalid",
  TooManyRequests: "TooManyRequests",
  InternalError: "InternalError",
  ServiceUnavailable: "ServiceUnavailable",
  Timeout: "Timeout",
  ServerTimeout: "ServerTimeout",
  Unknown: "Unknown",
  /** No response: the connection failed or was cut. */
  NetworkError: "NetworkError",
  /** A response that is not what the API promises (not JSON, wrong shape). */
  InvalidResponse: "InvalidResponse",
} as const;
export type KubeReason = (typeof KubeReason)[keyof typeof KubeReason];

const reasonForCode: Readonly<Record<number, KubeReason>> = {
  400: KubeReason.BadRequest,
  401: KubeReason.Unauthorized,
  403: KubeReason.Forbidden,
  404: KubeReason.NotFound,
  405: KubeReason.MethodNotAllowed,
  406: KubeReason.NotAcceptable,
  409: KubeReason.Conflict,
  410: KubeReason.Gone,
  413: KubeReason.RequestEntityTooLarge,
  415: KubeReason.UnsupportedMediaType,
  422: KubeReason.Invalid,
  429: KubeReason.TooManyRequests,
  500: KubeReason.InternalError,
  503: KubeReason.ServiceUnavailable,
  504: KubeReason.Timeout,
};

export interface KubeApiErrorOptions {
  /** HTTP status; 0 when there was no response (network failure, timeout). */
  readonly status: number;
  readonly reason: string;
  /** The server's message (or the client's, without a response). */
  readonly serverMessage: string;
  /** What was being done, e.g. "create ConfigMap ns/name" or "GET /api/v1/...". */
  readonly operation: string;
  readonly details?: StatusDetails;
  readonly resource?: ErrorResource;
  readonly retryAfterMs?: number;
  /** True when a 404 came without a Status body: the resource type itself is not served. */
  readonly resourceTypeMissing?: boolean;
  readonly cause?: unknown;
}

export class KubeApiError extends DriftlessError {
  readonly status: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  readonly serverMessage: string;
  /** How long the server asked us to wait (Retry-After or details.retryAfterSeconds). */
  readonly retryAfterMs: number | undefined;
  /** A 404 without a Status body: the path itself is not served (the resource type, at that scope and version). */
  readonly resourceTypeMissing: boolean;

  constructor(options: KubeApiErrorOptions) {
    const { errorClass, code } = classify(options.status, options.reason, options.resourceTypeMissing === true);
    const what = options.status === 0 ? options.reason : `${options.status} ${options.reason}`;
    super({
      code,
      errorClass,
      message: `${options.operation}: ${options.serverMessage} (${what})`,
      resources: options.resource === undefined ? [] : [options.resource],
      cause: options.cause,
    });
    this.status = options.status;
    this.reason = options.reason;
    this.details = options.details;
    this.serverMessage = options.serverMessage;
    this.retryAfterMs = options.retryAfterMs;
    this.resourceTypeMissing = options.resourceTypeMissing === true;
  }

  /** An error from a Status (a response body, or the object of a watch ERROR event). */
  static fromStatus(
    status: ApiStatus,
    httpStatus: number,
    operation: string,
    extra: { resource?: ErrorResource; retryAfterMs?: number } = {},
  ): KubeApiError {
    const code = status.code !== undefined && status.code > 0 ? status.code : httpStatus;
    const retrySeconds = status.details?.retryAfterSeconds;
    return new KubeApiError({
      status: code,
      reason:
        status.reason !== undefined && status.reason !== ""
          ? status.reason
          : (reasonForCode[code] ?? KubeReason.Unknown),
      serverMessage: status.message ?? `HTTP ${code}`,
      operation,
      ...(status.details === undefined ? {} : { details: status.details }),
      ...(extra.resource === undefined ? {} : { resource: extra.resource }),
      ...(extra.retryAfterMs !== undefined
        ? { retryAfterMs: extra.retryAfterMs }
        : retrySeconds !== undefined && retrySeconds > 0
          ? { retryAfterMs: retrySeconds * 1000 }
          : {}),
    });
  }

  /** An error for a response without a Status body (proxies, "404 page not found"). */
  static fromHttp(
    httpStatus: number,
    body: string,
    operation: string,
    extra: { resource?: ErrorResource; retryAfterMs?: number } = {},
  ): KubeApiError {
    return new KubeApiError({
      status: httpStatus,
      reason: reasonForCode[httpStatus] ?? KubeReason.Unknown,
      serverMessage: body.trim().slice(0, 500) || `HTTP ${httpStatus}`,
      operation,
      // Registered resources answer 404 with a Status; a bare 404 means the path is not served at all.
      resourceTypeMissing: httpStatus === 404,
      ...(extra.resource === undefined ? {} : { resource: extra.resource }),
      ...(extra.retryAfterMs === undefined ? {} : { retryAfterMs: extra.retryAfterMs }),
    });
  }

  static network(operation: string, cause: unknown, reason: KubeReason = KubeReason.NetworkError): KubeApiError {
    const message = cause instanceof Error ? cause.message : String(cause);
    return new KubeApiError({ status: 0, reason, serverMessage: message, operation, cause });
  }
}

/**
 * 409, 410, 429, 5xx, garbled responses and failures without a response are transient; 401/403 need permissions the
 * user must grant; 400/422 are objects the user must fix. A 404 without a Status body means the
 * resource type is not served (a CRD not installed yet): stalled, not terminal.
 */
function classify(
  status: number,
  reason: string,
  resourceTypeMissing: boolean,
): { errorClass: ErrorClass; code: KnvCode } {
  // A garbled response (a proxy's error page, a cut stream) says nothing about the request.
  if (reason === KubeReason.InvalidResponse) return { errorClass: ErrorClass.Retry, code: KnvCode.ApiServer };
  if (status === 0 || status === 409 || status === 410 || status === 429 || status >= 500) {
    return { errorClass: ErrorClass.Retry, code: KnvCode.ApiServer };
  }
  if (status === 401 || status === 403)
    return { errorClass: ErrorClass.Terminal, code: KnvCode.InsufficientPermission };
  if (status === 400 || status === 422) return { errorClass: ErrorClass.Terminal, code: KnvCode.Apply };
  if (status === 404 && resourceTypeMissing) return { errorClass: ErrorClass.Stalled, code: KnvCode.UnknownObjectKind };
  return { errorClass: ErrorClass.Terminal, code: KnvCode.ApiServer };
}

function hasStatus(error: unknown, status: number): error is KubeApiError {
  return error instanceof KubeApiError && error.status === status;
}

/** 404, for a missing object or a resource type that is not served. */
export function isNotFound(error: unknown): error is KubeApiError {
  return hasStatus(error, 404);
}

/** 404 for a path the API server does not serve: the type is gone, or not at that scope or version. */
export function isResourceTypeMissing(error: unknown): error is KubeApiError {
  return isNotFound(error) && error.resourceTypeMissing;
}

/** 409 from a stale resourceVersion or a failed precondition (not AlreadyExists). */
export function isConflict(error: unknown): error is KubeApiError {
  return hasStatus(error, 409) && error.reason !== KubeReason.AlreadyExists;
}

export function isAlreadyExists(error: unknown): error is KubeApiError {
  return hasStatus(error, 409) && error.reason === KubeReason.AlreadyExists;
}

/** 410: the resourceVersion or continue token is too old (reason Expired or Gone); relist. */
export function isGone(error: unknown): error is KubeApiError {
  return hasStatus(error, 410);
}

export function isForbidden(error: unknown): error is KubeApiError {
  return hasStatus(error, 403);
}

export function isUnauthorized(error: unknown): error is KubeApiError {
  return hasStatus(error, 401);
}

/** 422 (or 400 with reason Invalid): the object fails validation. */
export function isInvalid(error: unknown): error is KubeApiError {
  return error instanceof KubeApiError && (error.status === 422 || error.reason === KubeReason.Invalid);
}

export function isTooManyRequests(error: unknown): error is KubeApiError {
  return hasStatus(error, 429);
}

/**
 * A failure in the words a status shows after naming the object: the API server's own message when it
 * answered (as Config Sync's errors quote it), the whole message otherwise (no answer, or not a request).
 */
export function failureText(thrown: unknown): string {
  if (thrown instanceof KubeApiError && thrown.status > 0) return thrown.serverMessage;
  return thrown instanceof Error ? thrown.message : String(thrown);
}

/** What was thrown, as an Error (a thrown string or object is wrapped), for callbacks that take one. */
export function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}
