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

/** Errnos that say the checkout's tree itself is in the way (a permission, a file where a folder goes): terminal. */
const treeErrnos = new Set(["EACCES", "EPERM", "EROFS", "ENOTDIR", "EEXIST", "EISDIR"]);

/**
 * The class of a file system error met while preparing a render: the tree's own shape is the commit's to fix,
 * anything else (ENOSPC, EMFILE, EIO) is the machine's and passes.
 */
export function fileErrorClass(error: unknown): ErrorClass {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && treeErrnos.has(code) ? ErrorClass.Terminal : ErrorClass.Retry;
}
