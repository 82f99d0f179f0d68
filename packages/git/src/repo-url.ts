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

export interface RepoUrl {
  /** The URL to give git: credentials removed for http(s). */
  readonly url: string;
  readonly transport: Transport | "unsupported";
  /** `scheme://host[:port]` for http(s), used to scope the credential helper to that origin. */
  readonly origin: string | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
}

const schemePattern = /^([a-z][a-z0-9+.-]*):\/\//i;
// scp-like syntax: [user@]host:path, where host has no slash before the first colon.
const scpLikePattern = /^(?:[^@/\s]+@)?[^/:\s]+:(?!\/\/)/;

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
  try {
    parsed = new URL(repo);
  } catch {
    return plain(repo, "unsupported");
  }
  const username = parsed.username === "" ? undefined : decodeURIComponent(parsed.username);
  const password = parsed.password === "" ? undefined : decodeURIComponent(parsed.password);
  parsed.username = "";
  parsed.password = "";
  return { url: parsed.href, transport: scheme, origin: parsed.origin, username, password };
}

/**
 * A URL safe to show in a message or log: the user-info of http(s) and other scheme URLs is
 * replaced (it is often a token, e.g. `https://<token>@github.com/...`); for ssh only a password
 * is dropped, since the user name (`git`) is what the user needs to see to debug a key problem.
 */
export function redactUrl(repo: string): string {
  const scheme = schemePattern.exec(repo)?.[1]?.toLowerCase();
  if (scheme === undefined) return repo;
  return repo.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@]*)@/i, (_match, prefix: string, userInfo: string) => {
    if (scheme.includes("ssh")) return `${prefix}${userInfo.split(":")[0] ?? ""}@`;
    return `${prefix}***@`;
  });
}

/**
 * Removes every secret value and every URL user-info from free text such as git's stderr, which
 * may echo the URL it was given or a prompt that contains the user name.
 */
export function redactText(text: string, secrets: readonly string[]): string {
  let result = text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s'"]+@/gi, "$1***@");
  for (const secret of secrets) {
    if (secret !== "") result = result.split(secret).join("***");
  }
  return result;
}
