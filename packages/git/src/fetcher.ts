import { createHash } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DriftlessError, ErrorClass, KnvCode, redactUrl } from "@driftless/api";
import { openAuthSession } from "./auth.ts";
import type { AuthSession } from "./auth.ts";
import { isCacheCorruption } from "./classify.ts";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { baseGitEnv } from "./git-env.ts";
import { GitSession } from "./git-session.ts";
import { KeyedLock } from "./keyed-lock.ts";
import { lsRemotePatterns, parseLsRemote, pickRemoteCommit } from "./ls-remote.ts";
import { CacheRepo, targetRef } from "./mirror.ts";
import { Transport, transportsFollowing } from "./repo-url.ts";
import { GitProcessError } from "./run-git.ts";
import { checkDirInCommit, resolveSourceDir } from "./source-dir.ts";
import { checkOutSubmodules, gitlinksOf, submoduleRefPrefix } from "./submodules.ts";
import { planFetch } from "./spec.ts";
import type { FetchPlan } from "./spec.ts";
import { GitAuthType } from "./types.ts";
import type { FetchResult, GitCredentials, GitLogger, GitSourceSpec, RemoteRevision } from "./types.ts";
import { Worktrees } from "./worktrees.ts";

export interface GitFetcherOptions {
  /** Where cache repositories and checkouts live: `<cacheDir>/<syncKey>/{repo.git,worktrees/<sha>}`. */
  readonly cacheDir: string;
  readonly logger?: GitLogger | undefined;
  /** Checkouts kept per sync, most recently used first; at least 1. Default 3. */
  readonly keepWorktrees?: number | undefined;
  /** Deadline for each git process, in milliseconds. Default 120 000 (git-sync's default). */
  readonly timeoutMs?: number | undefined;
  /**
   * Allow file:// URLs and local paths. Off by default: in a shared reconciler a RepoSync could
   * otherwise read another sync's cache or any repository on the node. For tests and local mode.
   */
  readonly allowFileTransport?: boolean | undefined;
  /** The git executable. Default `git` from PATH. */
  readonly gitBinary?: string | undefined;
  /** Where short-lived 0700 directories for ssh keys and CA bundles go. Default os.tmpdir(). */
  readonly tempDir?: string | undefined;
  /** Environment git inherits (proxies, PATH, HOME). Default process.env; GIT_* is dropped. */
  readonly env?: NodeJS.ProcessEnv | undefined;
}

export interface ResolveRequest {
  readonly spec: GitSourceSpec;
  readonly credentials?: GitCredentials | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface FetchRequest extends ResolveRequest {
  /**
   * Names this sync's cache directory: any non-empty string unique per sync (a queue or
   * reconciler name). Short keys of letters, digits, `.`, `_`, `-` are used as they are.
   */
  readonly syncKey: string;
}

const noopLogger: GitLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined };
// Short enough to leave room under NAME_MAX (255) and never "." or "..". A key ending in a
// 17-character "-<hash>" could collide with a hashed one, so such keys are hashed too.
const safeSyncKey = /^(?!\.)(?![\s\S]*-[0-9a-f]{16}$)[A-Za-z0-9._-]{1,120}$/;

/**
 * Fetches Git sources with the git CLI into a per-sync cache. Polls are cheap: `resolveRemote`
 * is one `git ls-remote`, and `fetch` of a commit already on disk runs nothing but that.
 */
export class GitFetcher {
  readonly #cacheDir: string;
  readonly #logger: GitLogger;
  readonly #keep: number;
  readonly #timeoutMs: number;
  readonly #transports: readonly Transport[];
  readonly #gitBinary: string;
  readonly #tempDir: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #locks = new KeyedLock();

  constructor(options: GitFetcherOptions) {
    this.#cacheDir = resolve(options.cacheDir);
    this.#logger = options.logger ?? noopLogger;
    this.#keep = Math.max(1, Math.floor(options.keepWorktrees ?? 3));
    this.#timeoutMs = options.timeoutMs ?? 120_000;
    this.#transports = [
      Transport.Https,
      Transport.Http,
      Transport.Ssh,
      Transport.Git,
      ...(options.allowFileTransport === true ? [Transport.File] : []),
    ];
    this.#gitBinary = options.gitBinary ?? "git";
    this.#tempDir = options.tempDir ?? tmpdir();
    this.#env = options.env ?? process.env;
  }

  /** The commit the spec points at on the remote, with one `git ls-remote` (none for a SHA). */
  async resolveRemote(request: ResolveRequest): Promise<RemoteRevision> {
    const credentials = request.credentials ?? { auth: GitAuthType.None };
    const plan = planFetch(request.spec, credentials, this.#transports);
    if (plan.target.kind === "commit") return { commit: plan.target.sha, ref: undefined };
    await mkdir(this.#cacheDir, { recursive: true });
    return this.#withSession(plan, credentials, request.signal, (session) => this.#lsRemote(session, plan));
  }

  /**
   * Makes the spec's commit available as a checkout and returns where. Serialised per syncKey.
   * Throws GitFetchError (KNV2004, or KNV1061 for an invalid spec), classified retry or terminal.
   */
  async fetch(request: FetchRequest): Promise<FetchResult> {
    const credentials = request.credentials ?? { auth: GitAuthType.None };
    const plan = planFetch(request.spec, credentials, this.#transports);
    const syncDir = this.syncDir(request.syncKey);
    return this.#locks.run(request.syncKey, () =>
      this.#withSession(plan, credentials, request.signal, async (session) => {
        const repo = new CacheRepo(session, join(syncDir, "repo.git"), plan.depth);
        const worktrees = new Worktrees(session, repo.gitDir, join(syncDir, "worktrees"));
        try {
          return await this.#fetchLocked(plan, session, repo, worktrees);
        } catch (error) {
          if (!(error instanceof GitFetchError) || !causedByCorruption(error)) throw error;
          this.#logger.warn("the cache repository is damaged; deleting it and fetching again", {
            repo: plan.displayRepo,
            syncKey: request.syncKey,
            error: error.message,
          });
          await repo.remove();
          return await this.#fetchLocked(plan, session, repo, worktrees);
        }
      }),
    );
  }

  /** Deletes a sync's cache and checkouts, e.g. when the RootSync/RepoSync is deleted. */
  async remove(syncKey: string): Promise<void> {
    const syncDir = this.syncDir(syncKey);
    await this.#locks.run(syncKey, () => rm(syncDir, { recursive: true, force: true }));
  }

  /**
   * `<cacheDir>/<syncKey>` when the key is a short, safe path segment; otherwise (too long for a
   * file name, or with `/`, `..` and the like) a readable prefix plus a hash of the key, so any
   * key maps to one directory inside cacheDir and different keys never share one.
   */
  syncDir(syncKey: string): string {
    if (syncKey === "") {
      throw new DriftlessError({
        code: KnvCode.Internal,
        errorClass: ErrorClass.Terminal,
        message: "syncKey is empty",
      });
    }
    if (safeSyncKey.test(syncKey)) return join(this.#cacheDir, syncKey);
    const readable = syncKey
      .replace(/[^A-Za-z0-9._-]+/g, "_")
      .replace(/^\.+/, "")
      .slice(0, 80);
    const hash = createHash("sha256").update(syncKey).digest("hex").slice(0, 16);
    return join(this.#cacheDir, `${readable}-${hash}`);
  }

  async #fetchLocked(
    plan: FetchPlan,
    session: GitSession,
    repo: CacheRepo,
    worktrees: Worktrees,
  ): Promise<FetchResult> {
    const started = performance.now();
    await repo.ensure();
    const { commit, fetched } = await this.#obtainCommit(plan, session, repo, worktrees);
    const checkedOut = await worktrees.exists(commit);
    // A checkout that exists was validated when it was made; its objects may since have been pruned.
    if (!checkedOut) await checkDirInCommit(session, repo.gitDir, commit, plan.dir);
    const links = checkedOut ? [] : await gitlinksOf(session, repo.gitDir, commit);
    const submodules = {
      session,
      repo,
      url: plan.repo.url,
      parentTransport: plan.repo.transport,
      allowedTransports: this.#transportsFor(plan),
    };
    const usedSubmoduleRefs = new Set<string>();
    const { dir, base } = await worktrees.materialize(
      commit,
      links.length === 0 ? undefined : (temp) => checkOutSubmodules(submodules, commit, links, temp, usedSubmoduleRefs),
    );
    // A checkout, once written, needs no objects: only the submodule commits of this one stay referenced.
    if (!checkedOut) await repo.dropRefsExcept(submoduleRefPrefix, usedSubmoduleRefs);
    await worktrees.touch(commit);
    const sourceDir = await resolveSourceDir(session, dir, plan.dir);
    const removed = await worktrees.collectGarbage(this.#keep, commit);
    const fields = {
      repo: plan.displayRepo,
      target: plan.description,
      commit,
      ms: Math.round(performance.now() - started),
    };
    if (fetched || !checkedOut) {
      this.#logger.info("fetched source", {
        ...fields,
        fetched,
        checkedOutFrom: base ?? "scratch",
        removedCheckouts: removed.length,
      });
    } else this.#logger.debug("source unchanged", fields);
    return { commit, dir, sourceDir, fetched };
  }

  async #obtainCommit(
    plan: FetchPlan,
    session: GitSession,
    repo: CacheRepo,
    worktrees: Worktrees,
  ): Promise<{ commit: string; fetched: boolean }> {
    if (plan.target.kind === "commit") {
      const sha = plan.target.sha;
      if (await alreadyHere(repo, worktrees, sha)) return { commit: sha, fetched: false };
      if (!(await repo.fetchCommit(plan.repo.url, sha))) {
        throw session.error(
          GitFailureReason.RevisionNotFound,
          `revision ${sha} not found in ${plan.displayRepo}: check spec.git.revision: the commit is not on any branch or tag of the repository`,
          undefined,
          ErrorClass.Terminal,
        );
      }
      return { commit: sha, fetched: true };
    }
    const remote = await this.#lsRemote(session, plan);
    if (await alreadyHere(repo, worktrees, remote.commit)) return { commit: remote.commit, fetched: false };
    // The ref may have moved since ls-remote; what fetch brought is the newer truth.
    return { commit: await repo.fetchRef(plan.repo.url, remote.ref), fetched: true };
  }

  async #lsRemote(session: GitSession, plan: FetchPlan): Promise<{ commit: string; ref: string }> {
    const output = await session.run(
      ["ls-remote", "--end-of-options", plan.repo.url, ...lsRemotePatterns(plan.target)],
      {
        cwd: this.#cacheDir,
        action: "list refs of",
      },
    );
    const found = pickRemoteCommit(parseLsRemote(output.stdout), plan.target);
    if (found !== undefined) return found;
    let message = `${plan.description} not found in ${plan.displayRepo}: check spec.git.branch and spec.git.revision (deleted, renamed or misspelled?)`;
    if (plan.target.kind === "ref" && /^[0-9a-f]{4,39}$/i.test(plan.target.name)) {
      message += "; a commit must be given as its full 40-character SHA";
    }
    throw session.error(GitFailureReason.RefNotFound, message, undefined, ErrorClass.Terminal);
  }

  /** What git may use for this repository, its redirects and its submodules. */
  #transportsFor(plan: FetchPlan): Transport[] {
    const parent = plan.repo.transport;
    // planFetch refused invalid and unsupported URLs already.
    return parent === "invalid" || parent === "unsupported" ? [] : transportsFollowing(parent, this.#transports);
  }

  async #withSession<T>(
    plan: FetchPlan,
    credentials: GitCredentials,
    signal: AbortSignal | undefined,
    task: (session: GitSession) => Promise<T>,
  ): Promise<T> {
    const auth: AuthSession = await openAuthSession({
      credentials,
      repo: plan.repo,
      displayRepo: plan.displayRepo,
      noSSLVerify: plan.noSSLVerify,
      proxy: plan.proxy,
      tempRoot: this.#tempDir,
      logger: this.#logger,
    });
    try {
      const session = new GitSession({
        gitBinary: this.#gitBinary,
        // Stop repository discovery at the cache: ls-remote runs outside any repository and must
        // not pick up the config of one that happens to contain the cache directory.
        env: baseGitEnv(this.#env, this.#transportsFor(plan), {
          ...auth.env,
          GIT_CEILING_DIRECTORIES: this.#cacheDir,
        }),
        timeoutMs: this.#timeoutMs,
        signal,
        secrets: auth.secrets,
        displayRepo: plan.displayRepo,
        description: plan.description,
        displayProxy: plan.proxy === undefined ? undefined : redactUrl(plan.proxy),
      });
      return await task(session);
    } finally {
      await auth.dispose();
    }
  }
}

function causedByCorruption(error: GitFetchError): boolean {
  const local = error.reason === GitFailureReason.Unknown || error.reason === GitFailureReason.RepoNotFound;
  return local && error.cause instanceof GitProcessError && isCacheCorruption(error.cause.stderr);
}

/**
 * Whether `sha` is checked out or in the cache, so nothing needs fetching. One only in the cache (a
 * branch switched back to, or a fetch that failed after receiving it) becomes the target: gc prunes
 * what no ref reaches at once (gc.pruneExpire=now), and the next checkout reads its objects.
 */
async function alreadyHere(repo: CacheRepo, worktrees: Worktrees, sha: string): Promise<boolean> {
  if (await worktrees.exists(sha)) return true;
  if (!(await repo.hasCommit(sha))) return false;
  await repo.keep(targetRef, sha);
  return true;
}
