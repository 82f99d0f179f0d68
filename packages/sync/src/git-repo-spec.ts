/**
 * Whether kustomize reads a resource entry as a git repository (its repospec rules, kustomize api
 * v0.20: a scheme of ssh, https, http or file, or scp-style `user@host:path`, or `github.com/…`,
 * and a repository path it can split off). Config Sync counts such a resource as a remote base.
 */
import { posix } from "node:path";

const schemes = ["ssh://", "https://", "http://", "file://"] as const;

export function isGitRepoSpec(raw: string): boolean {
  if (raw.startsWith("/")) return false;
  let rest = (raw.split("?")[0] ?? "").replace(/^git::/i, "");
  const scheme = schemes.find((s) => rest.toLowerCase().startsWith(s)) ?? "";
  rest = rest.slice(scheme.length);
  const username = /^[a-zA-Z][a-zA-Z0-9-]*@/.exec(rest)?.[0] ?? "";
  rest = rest.slice(username.length);
  const github = /^github\.com[/:]/i.test(rest);
  const scpStyle = scheme === "" && (username !== "" || github);
  if (scheme === "" && !scpStyle) return false;
  if (scheme !== "file://") {
    let separator = rest.indexOf("/");
    const colon = rest.indexOf(":");
    if (scpStyle && (separator === -1 || (colon > 0 && colon < separator))) separator = colon;
    const host = separator >= 0 ? rest.slice(0, separator + 1) : rest;
    rest = separator >= 0 ? rest.slice(separator + 1) : "";
    if (host === "" && !github) return false;
  } else rest = username + rest;
  const parts = explicitSplit(rest) ?? defaultSplit(rest, scheme === "file://");
  if (parts === undefined || parts.repoPath === "") return false;
  // A path inside the repository that climbs out of it is refused.
  return posix.normalize(parts.root.replace(/^\//, "")).split("/")[0] !== "..";
}

interface Split {
  readonly repoPath: string;
  readonly root: string;
}

/** `…/_git/repo/path`, `repo//path` or `repo.git/path`. */
function explicitSplit(n: string): Split | undefined {
  const gitRoot = n.indexOf("_git/");
  if (gitRoot >= 0) {
    const [repo = "", ...path] = n.slice(gitRoot + "_git/".length).split("/");
    return { repoPath: n.slice(0, gitRoot + "_git/".length) + repo, root: path.join("/") };
  }
  const doubleSlash = n.indexOf("//");
  if (doubleSlash >= 0) return { repoPath: n.slice(0, doubleSlash), root: n.slice(doubleSlash + 2) };
  const dotGit = n.indexOf(".git");
  if (dotGit >= 0) return { repoPath: n.slice(0, dotGit + 4), root: n.slice(dotGit + 4) };
  return undefined;
}

/** The whole path for file://, else `org/repo` and the rest. */
function defaultSplit(n: string, wholePath: boolean): Split | undefined {
  if (wholePath) return { repoPath: n, root: "" };
  const segments = n.split("/");
  if (segments.length < 2) return undefined;
  return { repoPath: segments.slice(0, 2).join("/"), root: segments.slice(2).join("/") };
}
