/**
 * Typed failures of the matcher. This package imports nothing of ours, so these mirror the shared
 * error model by shape: a Config Sync-style `code` (KNV…), a `reason` naming the failure mode, and
 * an `errorClass` the applier can pass straight through (`retry` | `terminal` | `stalled`).
 */

export const ObjectMatcherErrorReason = {
  LastAppliedTooLarge: "LastAppliedTooLarge",
  LastAppliedUnreadable: "LastAppliedUnreadable",
  InvalidObject: "InvalidObject",
} as const;
export type ObjectMatcherErrorReason = (typeof ObjectMatcherErrorReason)[keyof typeof ObjectMatcherErrorReason];

/** Where an error is about one object: its identity as far as it could be read. */
export interface ObjectRef {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
}

export function describeObject(ref: ObjectRef): string {
  const kind = ref.kind ?? "object";
  const name = ref.name === undefined ? "(unnamed)" : ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
  return `${kind} ${name}`;
}

/**
 * The last-applied record does not fit the API server's 256 KiB budget for all annotations of an
 * object, even compressed with every value longer than its digest digested (many short values, or the
 * object's own annotations near the budget). Terminal: the declaration must shrink (or be split) in Git.
 */
export class LastAppliedTooLargeError extends Error {
  readonly code = "KNV2009";
  readonly reason = ObjectMatcherErrorReason.LastAppliedTooLarge;
  readonly errorClass = "terminal";
  readonly object: ObjectRef;
  /** Bytes all annotations would take with the record (keys + values, as the API server counts). */
  readonly annotationsBytes: number;
  /** Bytes of the compressed record alone, and of the canonical JSON it was compressed from. */
  readonly recordBytes: number;
  readonly uncompressedBytes: number;
  readonly limitBytes: number;

  constructor(init: {
    object: ObjectRef;
    annotationKey: string;
    annotationsBytes: number;
    recordBytes: number;
    uncompressedBytes: number;
    limitBytes: number;
  }) {
    super(
      `${describeObject(init.object)} is too large to record its last-applied configuration: ` +
        `annotation ${init.annotationKey} would be ${init.recordBytes} bytes compressed ` +
        `(${init.uncompressedBytes} bytes of JSON), bringing all annotations to ${init.annotationsBytes} bytes, ` +
        `over the API server's limit of ${init.limitBytes} bytes; shrink the object or split it into several`,
    );
    this.name = "LastAppliedTooLargeError";
    this.object = init.object;
    this.annotationsBytes = init.annotationsBytes;
    this.recordBytes = init.recordBytes;
    this.uncompressedBytes = init.uncompressedBytes;
    this.limitBytes = init.limitBytes;
  }
}

/**
 * The last-applied annotation is present but cannot be decoded (edited by hand, truncated, or
 * written by something else). Retry: the next update rewrites it.
 */
export class LastAppliedUnreadableError extends Error {
  readonly code = "KNV2009";
  readonly reason = ObjectMatcherErrorReason.LastAppliedUnreadable;
  readonly errorClass = "retry";
  readonly object: ObjectRef;

  constructor(object: ObjectRef, annotationKey: string, cause: unknown) {
    super(
      `${describeObject(object)}: annotation ${annotationKey} cannot be read as a last-applied record ` +
        `(${cause instanceof Error ? cause.message : String(cause)}); it will be rewritten on the next update`,
      { cause },
    );
    this.name = "LastAppliedUnreadableError";
    this.object = object;
  }
}

/** An input is not a JSON object shaped like a Kubernetes object. Terminal: a caller or manifest bug. */
export class InvalidObjectError extends Error {
  readonly code = "KNV1045";
  readonly reason = ObjectMatcherErrorReason.InvalidObject;
  readonly errorClass = "terminal";

  constructor(message: string) {
    super(message);
    this.name = "InvalidObjectError";
  }
}
