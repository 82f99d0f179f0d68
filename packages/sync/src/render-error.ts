/** The error of a failed render, shared by the walk that checks a kustomization and the kustomize run. */
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";

/**
 * A render failed (KNV1068, Config Sync's rendering error); the message names the file or carries the
 * tool's output. Terminal unless the tool timed out: the next commit may fix it.
 */
export class RenderingError extends DriftlessError {
  constructor(message: string, cause?: unknown, errorClass: ErrorClass = ErrorClass.Terminal) {
    super({ code: KnvCode.Rendering, errorClass, message, cause });
  }
}
