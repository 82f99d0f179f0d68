import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";

/**
 * Why a fetch failed, finer than the error class, so callers and tests can branch on it and
 * metrics can count it without parsing messages.
 */
export const GitFailureReason = {
  /** The server rejected the credentials, or required some and none were given. */
  AuthRejected: "AuthRejected",
  /** The SSH host key is not in known_hosts or does not match. */
  HostKeyRejected: "HostKeyRejected",
  /** TLS certificate verification failed. */
  TlsRejected: "TlsRejected",
  /** The repository does not exist, or is hidden from these credentials. */
  RepoNotFound: "RepoNotFound",
  /** The branch, tag or ref does not exist on the remote. */
  RefNotFound: "RefNotFound",
  /** The commit SHA is not in the repository. */
  RevisionNotFound: "RevisionNotFound",
  /** `spec.git.dir` does not exist in the commit, or is not a directory. */
  DirNotFound: "DirNotFound",
  /** The spec cannot be acted on: malformed URL, disallowed transport, `dir` escaping the repo. */
  InvalidSpec: "InvalidSpec",
  /**
   * The repository's content is refused: git's fsck rejected fetched objects (duplicate tree entries, `..` or
   * `.git` paths, a malicious .gitmodules), or a submodule's path runs through a symlink. Broken or hostile.
   */
  UnsafeContent: "UnsafeContent",
  /** Network trouble, 5xx, a broken transfer: expected to pass. */
  Unavailable: "Unavailable",
  /** A git process ran longer than its timeout and was killed. */
  Timeout: "Timeout",
  /** The caller's AbortSignal fired. */
  Aborted: "Aborted",
  /** Anything else git reported. */
  Unknown: "Unknown",
} as const;
export type GitFailureReason = (typeof GitFailureReason)[keyof typeof GitFailureReason];

export interface GitFetchErrorOptions {
  readonly reason: GitFailureReason;
  readonly errorClass: ErrorClass;
  /** Already redacted: no credentials. */
  readonly message: string;
  /** Repository URL with credentials redacted. */
  readonly repo: string;
  /** Human description of what was being fetched, e.g. `branch "main"`. */
  readonly target?: string;
  readonly cause?: unknown;
}

/**
 * A source fetch failure (KNV2004), classified: credentials, host keys, TLS, missing refs and
 * missing directories are terminal (the user must change the spec or the Secret); network trouble
 * is retried. The message never contains a secret.
 */
export class GitFetchError extends DriftlessError {
  readonly reason: GitFailureReason;
  readonly repo: string;
  readonly target: string | undefined;

  constructor(options: GitFetchErrorOptions) {
    super({
      code: options.reason === GitFailureReason.InvalidSpec ? KnvCode.InvalidSync : KnvCode.SourceFetch,
      errorClass: options.errorClass,
      message: options.message,
      cause: options.cause,
    });
    this.reason = options.reason;
    this.repo = options.repo;
    this.target = options.target;
  }
}

/** The class each reason gets, unless the call site knows better. */
export function defaultErrorClass(reason: GitFailureReason): ErrorClass {
  switch (reason) {
    case GitFailureReason.Unavailable:
    case GitFailureReason.Timeout:
    case GitFailureReason.Aborted:
    case GitFailureReason.Unknown:
      return ErrorClass.Retry;
    default:
      return ErrorClass.Terminal;
  }
}
