import { GitFailureReason } from "./errors.ts";

/**
 * Reads git's stderr (run with LC_ALL=C, so English) and says what went wrong. The patterns cover
 * git's own messages, libcurl's, OpenSSH's and the common hosting services' (GitHub, GitLab,
 * Bitbucket, Gitea answer "Repository not found" or a 404 when the credentials cannot see a
 * private repository, so that is also reported as possibly a credentials problem).
 */
interface Rule {
  readonly reason: GitFailureReason;
  readonly pattern: RegExp;
}

const rules: readonly Rule[] = [
  {
    reason: GitFailureReason.HostKeyRejected,
    pattern: /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No \S+ host key is known for/i,
  },
  {
    reason: GitFailureReason.AuthRejected,
    pattern:
      /Authentication failed|Permission denied \(|HTTP Basic: Access denied|returned error: 40[13]\b|could not read (Username|Password)|terminal prompts disabled|invalid credentials|Load key .*: (invalid format|error in libcrypto)|Bad permissions|Invalid username or password|access denied|Too many authentication failures/i,
  },
  {
    reason: GitFailureReason.TlsRejected,
    pattern:
      /SSL certificate problem|server certificate verification failed|unable to get local issuer certificate|self[- ]signed certificate|certificate verify failed|error setting certificate/i,
  },
  {
    reason: GitFailureReason.InvalidSpec,
    pattern:
      /transport '[^']*' not allowed|Unable to find remote helper|unsupported URL protocol|Protocol "?[^"]*"? not supported/i,
  },
  // Before Unavailable, which "index-pack failed" would otherwise match: a refused object is not transient.
  { reason: GitFailureReason.UnsafeContent, pattern: /fsck error|error: object [0-9a-f]{7,}: [A-Za-z]+: / },
  { reason: GitFailureReason.RefNotFound, pattern: /couldn't find remote ref|Remote branch .* not found/i },
  {
    reason: GitFailureReason.RevisionNotFound,
    pattern: /not our ref|Server does not allow request for unadvertised object|unadvertised object/i,
  },
  {
    reason: GitFailureReason.RepoNotFound,
    pattern:
      /Repository not found|repository '[^']*' not found|does not appear to be a git repository|returned error: 404\b|not found: did you run git update-server-info|No such file or directory|project you were looking for could not be found/i,
  },
  {
    reason: GitFailureReason.Unavailable,
    pattern:
      /Could not resolve host|Connection refused|Connection timed out|Operation timed out|timed out|Connection reset|Connection closed|returned error: (5\d\d|429|408)\b|RPC failed|early EOF|remote end hung up|Network is unreachable|No route to host|Temporary failure|SSL_ERROR_SYSCALL|unexpected disconnect|kex_exchange_identification|index-pack failed|unable to access/i,
  },
];

export function classifyGitStderr(stderr: string): GitFailureReason {
  for (const rule of rules) if (rule.pattern.test(stderr)) return rule.reason;
  return GitFailureReason.Unknown;
}

// "host key is known": ssh's line naming the host and key type a known_hosts lacks, which Config Sync's error quotes.
const interesting =
  /^(fatal|error|remote|ssh|warning: (?!redirecting))|denied|failed|not found|refused|timed out|certificate|host key is known/i;

/**
 * The lines of stderr a user needs, at most `maxLength` characters: git prints progress and
 * hints around the one line that matters. Callers redact before calling.
 */
export function summarizeStderr(stderr: string, maxLength = 600): string {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("hint:"));
  const chosen = lines.filter((line) => interesting.test(line));
  const summary = [...new Set(chosen.length > 0 ? chosen : lines.slice(-3))].join("; ");
  return summary.length > maxLength ? `${summary.slice(0, maxLength - 1)}…` : summary;
}

/** What the user can do about each reason; appended to the error message. */
export function adviceFor(reason: GitFailureReason): string {
  switch (reason) {
    case GitFailureReason.AuthRejected:
      return "the credentials were rejected: check spec.git.auth and the username/token or ssh key in the Secret named by spec.git.secretRef, and that they grant read access to this repository";
    case GitFailureReason.HostKeyRejected:
      return "the SSH host key was not accepted: put the server's key (ssh-keyscan <host>) in the known_hosts key of the Secret named by spec.git.secretRef";
    case GitFailureReason.TlsRejected:
      return "the server's TLS certificate could not be verified: provide its CA in the Secret named by spec.git.caCertSecretRef (key cert), or set spec.git.noSSLVerify";
    case GitFailureReason.RepoNotFound:
      return "check spec.git.repo; a private repository also looks missing when the credentials cannot read it";
    case GitFailureReason.RefNotFound:
      return "check spec.git.branch and spec.git.revision: the ref does not exist on the remote (deleted or misspelled)";
    case GitFailureReason.RevisionNotFound:
      return "check spec.git.revision: the commit is not in the repository";
    case GitFailureReason.InvalidSpec:
      return "check spec.git.repo: this kind of URL is not allowed";
    case GitFailureReason.UnsafeContent:
      return "git's fsck refused objects the server sent (a tree listing a name twice, a path with .. or .git, a malicious .gitmodules): the repository is broken or hostile and is not checked out; fix the commit, or point spec.git at another";
    case GitFailureReason.Unavailable:
    case GitFailureReason.Timeout:
      return "the remote could not be reached or did not answer in time; will retry";
    default:
      return "";
  }
}

/**
 * Signs that the local cache repository, not the remote, is broken (disk full during a write, a
 * killed gc, manual tampering). The cache is only a cache: the fetcher deletes it and fetches
 * again once instead of failing every poll until someone deletes it by hand.
 */
export function isCacheCorruption(stderr: string): boolean {
  return (
    /corrupt|bad object|did not send all necessary objects|unable to read [0-9a-f]{7,}|missing (blob|tree|commit) object|object file .* is empty|not a git repository|packfile .* cannot be accessed|inflate: data stream error|invalid object|shallow file has changed|bad tree object|could not parse commit|unable to parse/i.test(
      stderr,
    ) || isStaleLock(stderr)
  );
}

/**
 * A lock a killed git left (CacheRepo.ensure removes them first; this catches one it missed): git never
 * removes another process's lock, and no other process of ours uses the cache while the fetcher holds it.
 */
function isStaleLock(stderr: string): boolean {
  return /Unable to create '[^']*\.lock': File exists|cannot lock ref/i.test(stderr);
}
