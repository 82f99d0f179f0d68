import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";

/** Why pulling an image failed, finer than the error class: tests and logs branch on it. */
export const OciFailureReason = {
  /** The registry refused the credentials, or wanted some and none were given. */
  AuthRejected: "AuthRejected",
  /** The repository, tag or digest is not in the registry. */
  NotFound: "NotFound",
  /** The image reference cannot be read. */
  InvalidReference: "InvalidReference",
  /** The image is not one driftless can read: unknown media types, no layers, a digest mismatch. */
  InvalidImage: "InvalidImage",
  /** A layer would write outside its directory, or exceeds a size limit. */
  UnsafeLayer: "UnsafeLayer",
  /** spec.oci.dir is not a directory of the image. */
  DirNotFound: "DirNotFound",
  /** Network trouble or a 5xx: expected to pass. */
  Unavailable: "Unavailable",
} as const;
export type OciFailureReason = (typeof OciFailureReason)[keyof typeof OciFailureReason];

const terminal: readonly OciFailureReason[] = [
  OciFailureReason.AuthRejected,
  OciFailureReason.NotFound,
  OciFailureReason.InvalidReference,
  OciFailureReason.InvalidImage,
  OciFailureReason.UnsafeLayer,
  OciFailureReason.DirNotFound,
];

/**
 * A failed pull (KNV2004, Config Sync's source error). What the user must fix is terminal; network
 * trouble is retried. The message names the image (credentials masked), never a secret.
 */
export class OciFetchError extends DriftlessError {
  readonly reason: OciFailureReason;

  constructor(reason: OciFailureReason, message: string, cause?: unknown) {
    super({
      code: KnvCode.SourceFetch,
      errorClass: terminal.includes(reason) ? ErrorClass.Terminal : ErrorClass.Retry,
      message,
      cause,
    });
    this.reason = reason;
  }
}
