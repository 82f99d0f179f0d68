import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { ErrorClass, redactUrl, withoutTrailingSlashes } from "@driftless/api";
import { GitFailureReason } from "./errors.ts";
import type { GitSession } from "./git-session.ts";
import { blockedAncestor, isSafeTreePath } from "./link-tree.ts";
import type { CacheRepo } from "./mirror.ts";
import { parseRepoUrl, scpLikePattern } from "./repo-url.ts";
import type { RepoUrl, Transport } from "./repo-url.ts";
import { GitExit, GitProcessError } from "./run-git.ts";

/**
 * Submodules, fetched and checked out recursively as Config Sync's git-sync does: each gitlink's
 * commit is fetched from the URL `.gitmodules` gives for its path into the sync's cache repository
 * (so the objects live beside the superproject's, under `refs/driftless/submodules/`), then its tree
 * is written into the checkout at that path. Only a commit with a `.gitmodules` pays for the lookup.
 */

export interface Gitlink {
  readonly path: string;
  readonly sha: string;
}

/** Nested submodules deeper than this are refused: a loop of repositories would never end. */
const maxNesting = 8;

export interface SubmoduleContext {
  readonly session: GitSession;
  readonly repo: CacheRepo;
  /** The superproject's URL as git was given it: relative submodule URLs are resolved against it. */
  readonly url: string;
  /** The sync's repository's transport, which decided `allowedTransports` (transportsFollowing). */
  readonly parentTransport: RepoUrl["transport"];
  readonly allowedTransports: readonly Transport[];
}

/** The commit's gitlinks, or none when it has no `.gitmodules` (one cheap `cat-file`). */
export async function gitlinksOf(session: GitSession, gitDir: string, commit: string): Promise<Gitlink[]> {
  const local = { gitDir, cwd: gitDir, action: "read" };
  try {
    await session.runRaw(["cat-file", "-e", "--end-of-options", `${commit}:.gitmodules`], local);
  } catch (error) {
    if (error instanceof GitProcessError && error.exit === GitExit.Failed) return [];
    throw session.toFetchError(error, "read");
  }
  const { stdout } = await session.run(["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", commit], local);
  const links: Gitlink[] = [];
  for (const entry of stdout.split("\0")) {
    // "<mode> <type> <sha>\t<path>"
    const tab = entry.indexOf("\t");
    const [mode, type, sha] = entry.slice(0, tab).split(" ");
    if (mode === "160000" && type === "commit" && sha !== undefined) links.push({ path: entry.slice(tab + 1), sha });
  }
  return links;
}

/** Where the cache keeps each submodule commit it fetched; refs/driftless/submodules/<hash of url and commit>. */
export const submoduleRefPrefix = "refs/driftless/submodules/";

/**
 * Fetches each submodule's commit and writes its files under `dir`, recursively. Adds to `used` the ref
 * of every submodule commit the checkout took, so the cache can drop the others'.
 */
export async function checkOutSubmodules(
  ctx: SubmoduleContext,
  commit: string,
  links: readonly Gitlink[],
  dir: string,
  used: Set<string>,
  nesting = 1,
): Promise<void> {
  if (links.length === 0) return;
  const { session, repo } = ctx;
  if (nesting > maxNesting) {
    throw session.error(
      GitFailureReason.InvalidSpec,
      `submodules of ${session.displayRepo} are nested more than ${String(maxNesting)} deep`,
      undefined,
      ErrorClass.Terminal,
    );
  }
  const urls = await submoduleUrls(session, repo.gitDir, commit);
  for (const link of links) {
    if (!isSafeTreePath(link.path)) {
      throw invalid(ctx, `submodule path ${JSON.stringify(link.path)} in commit ${commit} is not a safe path`);
    }
    await refuseLinkOnTheWay(ctx, dir, link.path, commit);
    const url = resolveUrl(ctx, urls.get(link.path), link.path, commit);
    const ref = `${submoduleRefPrefix}${createHash("sha256").update(url).update("\0").update(link.sha).digest("hex").slice(0, 24)}`;
    if (!(await repo.hasCommit(link.sha)) && !(await repo.fetchCommit(url, link.sha, ref))) {
      throw session.error(
        GitFailureReason.RevisionNotFound,
        `submodule ${link.path} of ${session.displayRepo} points at commit ${link.sha}, which ${redactUrl(url)} does not have`,
        undefined,
        ErrorClass.Terminal,
      );
    }
    await repo.keep(ref, link.sha);
    used.add(ref);
    const target = join(dir, link.path);
    await rm(target, { recursive: true, force: true });
    await mkdir(target, { recursive: true });
    await repo.checkOut(link.sha, target);
    await checkOutSubmodules(
      { ...ctx, url },
      link.sha,
      await gitlinksOf(session, repo.gitDir, link.sha),
      target,
      used,
      nesting + 1,
    );
  }
}

/**
 * A submodule whose path runs through a symlink (one an earlier submodule wrote: `m` is a submodule holding
 * `n -> ../../..`, and another submodule sits at `m/n/x`) would be removed and written outside the checkout.
 */
async function refuseLinkOnTheWay(ctx: SubmoduleContext, dir: string, path: string, commit: string): Promise<void> {
  const blocked = await blockedAncestor(dir, path);
  if (blocked === undefined) return;
  throw ctx.session.error(
    GitFailureReason.UnsafeContent,
    `submodule ${path} in commit ${commit} of ${ctx.session.displayRepo} is not checked out: ${blocked.path} is ${blocked.symlink ? "a symlink" : "a file"} in the checkout, and writing through it could leave the checkout; fix the repository's submodules`,
    undefined,
    ErrorClass.Terminal,
  );
}

/** path → url from the commit's `.gitmodules`. */
async function submoduleUrls(session: GitSession, gitDir: string, commit: string): Promise<Map<string, string>> {
  let stdout = "";
  try {
    stdout = (
      await session.runRaw(
        ["config", "-z", "--blob", `${commit}:.gitmodules`, "--get-regexp", String.raw`^submodule\..*\.(path|url)$`],
        { gitDir, cwd: gitDir, action: "read .gitmodules of" },
      )
    ).stdout;
  } catch (error) {
    // Exit 1: no matching keys, which leaves every gitlink without a URL (reported per path below).
    if (!(error instanceof GitProcessError) || error.exit !== GitExit.Failed) throw session.toFetchError(error, "read");
  }
  const paths = new Map<string, string>();
  const urls = new Map<string, string>();
  for (const entry of stdout.split("\0")) {
    const newline = entry.indexOf("\n");
    if (newline < 0) continue;
    const key = entry.slice(0, newline);
    const value = entry.slice(newline + 1);
    const match = /^submodule\.(.*)\.(path|url)$/.exec(key);
    if (match?.[1] === undefined) continue;
    (match[2] === "path" ? paths : urls).set(match[1], value);
  }
  const byPath = new Map<string, string>();
  for (const [name, path] of paths) {
    const url = urls.get(name);
    if (url !== undefined) byPath.set(path, url);
  }
  return byPath;
}

/** An absolute URL, or one relative (`../lib.git`) to the superproject's, as git resolves them. */
function resolveUrl(ctx: SubmoduleContext, url: string | undefined, path: string, commit: string): string {
  if (url === undefined) throw invalid(ctx, `submodule ${path} in commit ${commit} has no url in .gitmodules`);
  let resolved = url;
  if (url.startsWith("./") || url.startsWith("../")) {
    try {
      resolved = scpLikePattern.test(ctx.url)
        ? relativeToScpLike(ctx.url, url)
        : new URL(url, ctx.url.endsWith("/") ? ctx.url : `${ctx.url}/`).toString();
    } catch {
      throw invalid(
        ctx,
        `submodule ${path}: the relative url ${JSON.stringify(url)} cannot be resolved against ${ctx.session.displayRepo}`,
      );
    }
  }
  const parsed = parseRepoUrl(resolved);
  if (
    parsed.transport === "invalid" ||
    parsed.transport === "unsupported" ||
    !ctx.allowedTransports.includes(parsed.transport) ||
    resolved.startsWith("-")
  ) {
    const used = parsed.transport === "invalid" || parsed.transport === "unsupported" ? "a" : `the ${parsed.transport}`;
    throw invalid(
      ctx,
      `submodule ${path}: url ${JSON.stringify(redactUrl(resolved))} uses ${used} transport, which is not allowed here: a submodule of a ${String(ctx.parentTransport)} repository may use ${ctx.allowedTransports.join(" or ")} only`,
    );
  }
  return parsed.url;
}

/**
 * `../lib.git` against `git@host:org/repo.git` (no URL parser reads that form), as git does: each `../`
 * drops the last path component, down to the host's colon; `./` is skipped.
 */
export function relativeToScpLike(parent: string, url: string): string {
  let base = withoutTrailingSlashes(parent);
  let rest = url;
  let colon = false;
  for (;;) {
    if (rest.startsWith("./")) rest = rest.slice(2);
    else if (rest.startsWith("../")) {
      rest = rest.slice(3);
      const slash = base.lastIndexOf("/");
      const hostColon = base.indexOf(":");
      if (slash > hostColon) base = base.slice(0, slash);
      else if (hostColon >= 0 && !colon) {
        base = base.slice(0, hostColon);
        colon = true;
      } else throw new Error(`cannot go above ${parent}`);
    } else break;
  }
  return `${base}${colon ? ":" : "/"}${rest}`;
}

function invalid(ctx: SubmoduleContext, message: string): ReturnType<GitSession["error"]> {
  return ctx.session.error(
    GitFailureReason.InvalidSpec,
    `${message} (${ctx.session.displayRepo})`,
    undefined,
    ErrorClass.Terminal,
  );
}
