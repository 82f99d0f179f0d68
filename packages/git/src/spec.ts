import { ErrorClass, redactUrl, relativeSourceDir } from "@driftless/api";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { parseRepoUrl, Transport } from "./repo-url.ts";
import { unsupportedAuthMessage } from "./secret-data.ts";
import type { RepoUrl } from "./repo-url.ts";
import { GitAuthType } from "./types.ts";
import type { GitCredentials, GitSourceSpec } from "./types.ts";

/**
 * Validates a `spec.git` and decides what to fetch, before any process runs: a bad spec is a
 * terminal error with a message naming the field, not a git failure to decode later.
 */

export const defaultBranch = "master";

/** What the spec points at. */
export type FetchTarget =
  /** The tip of `spec.git.branch`: its refs, in the order they are tried. */
  | { readonly kind: "branch"; readonly candidates: readonly string[] }
  /** A full commit SHA: no ref to resolve. */
  | { readonly kind: "commit"; readonly sha: string }
  /** A tag, branch or full ref named by `revision`; `candidates` in the order they are tried. */
  | { readonly kind: "ref"; readonly name: string; readonly candidates: readonly string[] };

export interface FetchPlan {
  readonly repo: RepoUrl;
  /** Credentials removed, for messages and logs. */
  readonly displayRepo: string;
  readonly target: FetchTarget;
  /** E.g. `branch "main"` or `revision "v1.2.0"`, for messages. */
  readonly description: string;
  /** `dir` normalised: relative, no `..`, `.` for the root. */
  readonly dir: string;
  readonly noSSLVerify: boolean;
  /** git's http.proxy: spec.git.proxy, else the Secret's key for the repository's scheme; http(s) only. */
  readonly proxy: string | undefined;
  /** `--depth` of every fetch; undefined fetches the whole history (gitSyncDepth 0). */
  readonly depth: number | undefined;
}

/** git-sync's default, which Config Sync keeps: one commit. */
export const defaultDepth = 1;

const fullSha = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;
// git check-ref-format rules that matter here: no whitespace or control characters, none of
// ~^:?*[\ , no "..", no "@{", no leading "-" (it would be read as an option), no trailing "/"/".lock".
const refName = /^(?!-)(?!.*\.\.)(?!.*@\{)(?!.*\/\/)[^\s~^:?*[\\\x00-\x1f\x7f]+(?<![/.]|\.lock)$/;

export function planFetch(
  spec: GitSourceSpec,
  credentials: GitCredentials,
  allowedTransports: readonly Transport[],
): FetchPlan {
  const displayRepo = redactUrl(spec.repo);
  const invalid = (message: string): GitFetchError =>
    new GitFetchError({
      reason: GitFailureReason.InvalidSpec,
      errorClass: ErrorClass.Terminal,
      repo: displayRepo,
      message,
    });

  if (spec.repo.trim() === "") throw invalid("spec.git.repo is empty");
  if (spec.repo.startsWith("-") || /[\s\x00-\x1f\x7f]/.test(spec.repo)) {
    throw invalid(`spec.git.repo ${JSON.stringify(displayRepo)} is not a valid repository URL`);
  }
  const repo = parseRepoUrl(spec.repo);
  if (repo.transport === "invalid") {
    throw invalid(`spec.git.repo ${JSON.stringify(displayRepo)} is not a valid URL (check its port and %-escapes)`);
  }
  if (repo.transport === "unsupported") {
    throw invalid(
      `spec.git.repo ${JSON.stringify(displayRepo)} uses an unsupported scheme; use https://, ssh:// or user@host:path`,
    );
  }
  if (!allowedTransports.includes(repo.transport)) {
    throw invalid(
      `spec.git.repo ${JSON.stringify(displayRepo)}: the ${repo.transport} transport is not allowed here (allowed: ${allowedTransports.join(", ")})`,
    );
  }
  checkAuth(spec, credentials, repo, invalid);

  const branch = nonEmpty(spec.branch) ?? defaultBranch;
  const revision = nonEmpty(spec.revision) ?? "HEAD";
  if (!refName.test(branch)) throw invalid(`spec.git.branch ${JSON.stringify(branch)} is not a valid branch name`);

  let target: FetchTarget;
  let description: string;
  if (revision === "HEAD") {
    // The branch first; then, as git-sync fetches any name git resolves, `refs/<name>` and a tag.
    const candidates = branch.startsWith("refs/")
      ? [branch]
      : [`refs/heads/${branch}`, `refs/${branch}`, `refs/tags/${branch}`];
    target = { kind: "branch", candidates };
    description = `branch ${JSON.stringify(branch)}`;
  } else if (fullSha.test(revision)) {
    target = { kind: "commit", sha: revision.toLowerCase() };
    description = `revision ${revision.toLowerCase()}`;
  } else if (refName.test(revision)) {
    // git's order for a short name, as git-sync's fetch resolves it: `pull/7/head`, `tags/v1`, `heads/x` work too.
    const candidates = revision.startsWith("refs/")
      ? [revision]
      : [`refs/${revision}`, `refs/tags/${revision}`, `refs/heads/${revision}`];
    target = { kind: "ref", name: revision, candidates };
    description = `revision ${JSON.stringify(revision)}`;
  } else {
    throw invalid(`spec.git.revision ${JSON.stringify(revision)} is neither a commit SHA nor a valid tag or ref name`);
  }

  return {
    repo,
    displayRepo,
    target,
    description,
    dir: normalizeDir(spec.dir, invalid),
    noSSLVerify: spec.noSSLVerify === true,
    proxy: proxyFor(spec, credentials, repo, invalid),
    depth: depthOf(spec.depth, invalid),
  };
}

const proxySchemes = ["http:", "https:", "socks4:", "socks4a:", "socks5:", "socks5h:"];

function proxyFor(
  spec: GitSourceSpec,
  credentials: GitCredentials,
  repo: RepoUrl,
  invalid: (message: string) => GitFetchError,
): string | undefined {
  // libcurl's proxy: ssh:// and git:// connect directly whatever is set.
  if (repo.transport !== Transport.Https && repo.transport !== Transport.Http) return undefined;
  const fromSpec = nonEmpty(spec.proxy);
  const fromSecret = repo.transport === Transport.Https ? credentials.httpsProxy : credentials.httpProxy;
  const proxy = fromSpec ?? nonEmpty(fromSecret);
  if (proxy === undefined) return undefined;
  const field =
    fromSpec !== undefined
      ? "spec.git.proxy"
      : `the Secret's ${repo.transport === Transport.Https ? "https_proxy" : "http_proxy"} key`;
  let url: URL | undefined;
  try {
    url = new URL(proxy);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    !proxySchemes.includes(url.protocol) ||
    url.hostname === "" ||
    /[\s\x00-\x1f\x7f]/.test(proxy)
  ) {
    throw invalid(
      `${field} ${JSON.stringify(redactUrl(proxy))} is not a proxy URL such as http://proxy.example.com:3128`,
    );
  }
  return proxy;
}

function depthOf(depth: number | undefined, invalid: (message: string) => GitFetchError): number | undefined {
  if (depth === undefined) return defaultDepth;
  if (!Number.isSafeInteger(depth) || depth < 0)
    throw invalid(`spec.override.gitSyncDepth must be a whole number of commits, 0 for all (got ${String(depth)})`);
  return depth === 0 ? undefined : depth;
}

function checkAuth(
  spec: GitSourceSpec,
  credentials: GitCredentials,
  repo: RepoUrl,
  invalid: (message: string) => GitFetchError,
): void {
  const declared = nonEmpty(spec.auth);
  if (declared !== undefined && declared !== credentials.auth) {
    const supported = Object.values(GitAuthType) as readonly string[];
    if (!supported.includes(declared)) {
      throw invalid(unsupportedAuthMessage(declared));
    }
    // The caller read the wrong Secret keys for this spec: a driftless bug, but still the spec's fetch.
    throw invalid(`spec.git.auth is ${JSON.stringify(declared)} but ${credentials.auth} credentials were supplied`);
  }
  // A local repository (local mode) asks for no credentials: git-sync fetches it whatever the auth, so Config
  // Sync syncs it with any auth whose Secret is valid, and so does driftless. A remote that would never be
  // sent the credentials is refused below.
  if (repo.transport === Transport.File) return;
  if (
    (credentials.auth === GitAuthType.Token || credentials.auth === GitAuthType.CookieFile) &&
    repo.transport !== Transport.Https &&
    repo.transport !== Transport.Http
  ) {
    throw invalid(`spec.git.auth is ${credentials.auth}, which needs an http(s) spec.git.repo URL`);
  }
  if (credentials.auth === GitAuthType.Ssh && repo.transport !== Transport.Ssh) {
    throw invalid("spec.git.auth is ssh, which needs an ssh:// or user@host:path spec.git.repo URL");
  }
}

function normalizeDir(dir: string | undefined, invalid: (message: string) => GitFetchError): string {
  const raw = nonEmpty(dir) ?? ".";
  if (raw.includes("\0") || raw.includes("\\"))
    throw invalid(`spec.git.dir ${JSON.stringify(raw)} is not a valid path`);
  // Config Sync accepts "/config" and "config" alike: both are relative to the repository root.
  const normalized = relativeSourceDir(raw);
  if (normalized === ".." || normalized.startsWith("../")) {
    throw invalid(`spec.git.dir ${JSON.stringify(raw)} points outside the repository`);
  }
  return normalized;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}
