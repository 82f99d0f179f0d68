/**
 * Queue failures, classified. Redis being down is transient (`retry`): queues are not the source of
 * truth, and whatever a lost enqueue would have triggered, the next poll or watch event triggers.
 */
import { DriftlessError, ErrorClass, KnvCode, toDriftlessError } from "@driftless/api";

/** Redis could not be reached (refused, timed out, connection lost) for a queue operation. */
export class QueueUnavailableError extends DriftlessError {
  readonly queue: string;

  constructor(options: {
    readonly queue: string;
    readonly operation: string;
    readonly server: string;
    readonly detail: string;
    readonly cause?: unknown;
  }) {
    super({
      // Config Sync has no code for its own infrastructure failing; KNV9998 is its "internal" code.
      code: KnvCode.Internal,
      errorClass: ErrorClass.Retry,
      message: `queue ${options.queue}: ${options.operation} failed: Redis at ${options.server} is unavailable (${options.detail})`,
      cause: options.cause,
    });
    this.queue = options.queue;
  }
}

/** Thrown inside `withDeadline` when the deadline passes first. */
export class DeadlineExceeded extends Error {
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = "DeadlineExceeded";
    this.timeoutMs = timeoutMs;
  }
}

/**
 * `promise`, or a DeadlineExceeded rejection after `timeoutMs`. The original promise keeps running
 * (there is no cancelling a Redis command); its late rejection is observed so it cannot surface as
 * an unhandled rejection.
 */
export async function withDeadline<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  promise.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Classifies a failure of a queue operation: unavailable when the connection is not up, else internal. */
export function queueOperationError(
  error: unknown,
  context: {
    readonly queue: string;
    readonly operation: string;
    readonly server: string;
    readonly connected: boolean;
    readonly redact: (text: string) => string;
  },
): DriftlessError {
  if (error instanceof DriftlessError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof DeadlineExceeded || !context.connected) {
    return new QueueUnavailableError({
      queue: context.queue,
      operation: context.operation,
      server: context.server,
      detail: context.redact(message),
      cause: error,
    });
  }
  return toDriftlessError(
    new Error(`queue ${context.queue}: ${context.operation} failed: ${context.redact(message)}`, { cause: error }),
  );
}
