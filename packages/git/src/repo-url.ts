/**
 * Understands `spec.git.repo`: which transport it uses, and any credentials written into it.
 *
 * Credentials in an http(s) URL (`https://user:token@host/repo`) are lifted out so that git never
 * sees them on its command line (visible in `ps`) or in a message; they are handed to git through
 * the credential helper instead, like Secret-provided tokens.
 */

/** Transport names as `GIT_ALLOW_PROTOCOL` spells them. */
export const Transport = {
  Https: "https",
  Http: "http",
  Ssh: "ssh",
  Git: "git",
  File: "file",
} as const;
export type Transport = (typeof Transport)[keyof typeof Transport];

/**
 * The transports a fetch from a repository on `parent` may use, for its redirects and submodules alike: the
 * parent's own, plus https where the parent's is plain (an upgrade). A tenant's `.gitmodules` cannot reach the
 * reconciler's disk over file:// (another sync's cache), nor hosts over ssh or git:// that an https sync never
 * named; `allowed` (the fetcher's) still bounds it.
 */
export function transportsFollowing(parent: Transport, allowed: readonly Transport[]): Transport[] {
  const family: readonly Transport[] =
    parent === Transport.Http || parent === Transport.Git ? [parent, Transport.Https] : [parent];
  return family.filter((t) => allowed.includes(t));
}

export interface RepoUrl {
  /** The URL to give git: credentials removed for http(s). */
  readonly url: string;
  /** "invalid": an http(s) URL that does not parse (a bad port, a bad %-escape). */
  readonly transport: Transport | "unsupported" | "invalid";
  /** `scheme://host[:port]` for http(s), used to scope the credential helper to that origin. */
  readonly origin: string | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
}

const schemePattern = /^([a-z][a-z0-9+.-]*):\/\//i;
// scp-like syntax: [user@]host:path, where host has no slash before the first colon.
export const scpLikePattern = /^(?:[^@/\s]+@)?[^/:\s]+:(?!\/\/)/;

export function parseRepoUrl(repo: string): RepoUrl {
  const scheme = schemePattern.exec(repo)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https") return parseHttpUrl(repo, scheme);
  if (scheme === "ssh" || scheme === "git+ssh" || scheme === "ssh+git") return plain(repo, Transport.Ssh);
  if (scheme === "git") return plain(repo, Transport.Git);
  if (scheme === "file") return plain(repo, Transport.File);
  if (scheme !== undefined) return plain(repo, "unsupported");
  // `<helper>::<address>` runs git-remote-<helper>; `ext::` runs an arbitrary command.
  if (/^[a-z][a-z0-9+.-]*::/i.test(repo)) return plain(repo, "unsupported");
  if (repo.startsWith("/") || repo.startsWith(".")) return plain(repo, Transport.File);
  if (scpLikePattern.test(repo)) return plain(repo, Transport.Ssh);
  return plain(repo, "unsupported");
}

function plain(url: string, transport: RepoUrl["transport"]): RepoUrl {
  return { url, transport, origin: undefined, username: undefined, password: undefined };
}

function parseHttpUrl(repo: string, scheme: "http" | "https"): RepoUrl {
  let parsed: URL;
  let username: string | undefined;
  let password: string | undefined;
  try {
    parsed = new URL(repo);
    username = parsed.username === "" ? undefined : decodeURIComponent(parsed.username);
    password = parsed.password === "" ? undefined : decodeURIComponent(parsed.password);
  } catch {
    return plain(repo, "invalid");
  }
  parsed.username = "";
  parsed.password = "";
  return { url: parsed.href, transport: scheme, origin: parsed.origin, username, password };
}
