import { DriftlessError, ErrorClass, KnvCode } from "./errors.ts";
import type { SyncKind } from "./groups.ts";

/** The sync an InvalidSyncError is about. */
export interface SyncIdentity {
  readonly kind: SyncKind;
  readonly namespace: string;
  readonly name: string;
}

/**
 * A RootSync/RepoSync whose spec or metadata cannot be acted on (KNV1061). Terminal: nothing
 * improves until the user edits the object, so it is reported on status (Stalled) and the sync
 * is not retried in a loop. It names no errorResources, as Config Sync's KNV1061 names none.
 */
export class InvalidSyncError extends DriftlessError {
  readonly sync: SyncIdentity;

  constructor(sync: SyncIdentity, message: string, cause?: unknown) {
    super({
      code: KnvCode.InvalidSync,
      errorClass: ErrorClass.Terminal,
      message,
      cause,
    });
    this.sync = sync;
  }
}
