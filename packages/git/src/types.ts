/**
 * The shapes @driftless/git takes and returns. Kept free of logic so every other file can import
 * them without pulling in process-spawning code.
 */

/** `spec.git.auth` values driftless supports. */
export const GitAuthType = {
  None: "none",
  Token: "token",
  Ssh: "ssh",
  CookieFile: "cookiefile",
} as const;
export type GitAuthType = (typeof GitAuthType)[keyof typeof GitAuthType];

/**
 * The fields of a RootSync/RepoSync `spec.git` that decide what is fetched. `spec.git` itself can be
 * passed as is: `period`, `secretRef` and `caCertSecretRef` are read by the caller, not here.
 */
export interface GitSourceSpec {
  /** Repository URL: https://, http://, ssh://, scp-like `user@host:path`, git://, or file:// (opt-in). */
  readonly repo: string;
  /** Branch to follow; default `master`. Ignored when `revision` names a tag or commit. */
  readonly branch?: string | undefined;
  /** Tag, full ref, branch name or commit SHA; `HEAD` (the default) means "the tip of `branch`". */
  readonly revision?: string | undefined;
  /** Directory inside the repository to read; default the repository root. */
  readonly dir?: string | undefined;
  /** When present it must agree with `credentials.auth`; catches wiring mistakes early. */
  readonly auth?: string | undefined;
  /** Skip TLS certificate verification (Config Sync's `noSSLVerify`). */
  readonly noSSLVerify?: boolean | undefined;
  /** HTTP(S) proxy URL for an http(s) repository (`spec.git.proxy`); wins over the Secret's proxy keys. */
  readonly proxy?: string | undefined;
  /** Commits of history to fetch (`override.gitSyncDepth`): 0 means all; default 1. */
  readonly depth?: number | undefined;
}

/** Decoded Secret data for `auth: token` (Secret keys `username` and `token`). */
export interface TokenCredentials {
  readonly auth: typeof GitAuthType.Token;
  readonly username: string;
  readonly token: string;
}

/** Decoded Secret data for `auth: ssh` (Secret keys `ssh` and, optionally, `known_hosts`). */
export interface SshCredentials {
  readonly auth: typeof GitAuthType.Ssh;
  readonly privateKey: string;
  /**
   * OpenSSH known_hosts lines. When absent the host key is not checked, as in Config Sync (which
   * keeps that default for backwards compatibility); driftless logs a warning each time.
   */
  readonly knownHosts?: string | undefined;
}

/**
 * Decoded Secret data for `auth: cookiefile` (Secret key `cookie_file`): a Netscape cookie jar that git
 * sends with every HTTP request (its `http.cookieFile`), as git-sync's cookie file option does.
 */
export interface CookieFileCredentials {
  readonly auth: typeof GitAuthType.CookieFile;
  readonly cookieFile: string;
}

export interface NoCredentials {
  readonly auth: typeof GitAuthType.None;
}

/** Everything secret a fetch may need, already read from Kubernetes Secrets by the caller. */
export type GitCredentials = (NoCredentials | TokenCredentials | SshCredentials | CookieFileCredentials) & {
  /** PEM CA bundle from the Secret named by `caCertSecretRef` (key `cert`). */
  readonly caCert?: string | undefined;
  /** Proxies from the Secret named by `secretRef` (keys `https_proxy`, `http_proxy`), by the repository's scheme. */
  readonly httpsProxy?: string | undefined;
  readonly httpProxy?: string | undefined;
};

/** What `resolveRemote` learned with one `git ls-remote`. */
export interface RemoteRevision {
  /** Full SHA of the commit the spec currently points at. */
  readonly commit: string;
  /**
   * The remote ref that was resolved (`refs/heads/main`, `refs/tags/v1`), or undefined when the
   * revision is a commit SHA and no network call was needed.
   */
  readonly ref: string | undefined;
}

export interface FetchResult {
  /** Full SHA of the checked-out commit. */
  readonly commit: string;
  /** Absolute path of a checkout of exactly that commit. Never modified once returned. */
  readonly dir: string;
  /** `spec.git.dir` inside `dir`, verified to exist, to be a directory and to stay inside `dir`. */
  readonly sourceDir: string;
  /** False when the commit was already on disk and no `git fetch` ran. */
  readonly fetched: boolean;
}

/** Minimal structured logger; adapt pino, console or the reconciler's logger to it. */
export interface GitLogger {
  debug(message: string, fields?: Readonly<Record<string, unknown>>): void;
  info(message: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void;
}
