import { withoutTrailingSlashes } from "@driftless/api";

/** The maxLength of spec.git.repo, spec.oci.image and spec.helm.repo in the RootSync/RepoSync CRDs. */
export const maxSourceUrlLength = 2048;

/** Hosts whose `owner/repo` paths name the same repository in any case. */
const caseInsensitivePathHosts: ReadonlySet<string> = new Set(["github.com", "gitlab.com"]);

const slash = "/".charCodeAt(0);

/**
 * One key per repository, whatever URL form names it. A push event names a repository as
 * `https://github.com/org/repo.git`, `git@github.com:org/repo.git` or `ssh://git@github.com/org/repo`;
 * a RootSync may use any of them. The key keeps host and path, drops scheme, user, default
 * ports, `.git` and trailing slashes, and lowercases the host. Paths stay case-sensitive (some
 * servers treat them so) except on github.com and gitlab.com, which ignore their case.
 * Undefined when the URL cannot be read (a bad %-escape such as `%zz`) or is over the CRDs' maxLength.
 */
export function repoKey(url: string): string | undefined {
  // A tenant writes sync URLs and every push keys them all: the work per URL must stay bounded.
  if (url.length > maxSourceUrlLength) return undefined;
  try {
    return keyOf(url);
  } catch {
    // decodeURIComponent throws URIError; such a URL names no repository a push could name.
    return undefined;
  }
}

function keyOf(url: string): string {
  const trimmed = url.trim();
  // scp-like syntax: [user@]host:path (no scheme, a colon before any slash).
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/.exec(trimmed);
  if (scp !== null && !/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) return join(scp[1] ?? "", scp[2] ?? "");
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return clean(trimmed);
  }
  if (parsed.protocol === "file:") return `file:${clean(decodeURIComponent(parsed.pathname))}`;
  const defaultPorts: Readonly<Record<string, string>> = {
    "https:": "443",
    "http:": "80",
    "ssh:": "22",
    "git:": "9418",
  };
  const port = parsed.port === "" || parsed.port === defaultPorts[parsed.protocol] ? "" : `:${parsed.port}`;
  return join(`${parsed.hostname}${port}`, decodeURIComponent(parsed.pathname));
}

function join(host: string, path: string): string {
  const lowerHost = host.toLowerCase();
  const key = withoutLeadingSlashes(clean(path));
  return `${lowerHost}/${caseInsensitivePathHosts.has(lowerHost) ? key.toLowerCase() : key}`;
}

function clean(path: string): string {
  const bare = withoutTrailingSlashes(path);
  return withoutTrailingSlashes(bare.endsWith(".git") ? bare.slice(0, -".git".length) : bare);
}

function withoutLeadingSlashes(text: string): string {
  let start = 0;
  while (start < text.length && text.charCodeAt(start) === slash) start++;
  return text.slice(start);
}
