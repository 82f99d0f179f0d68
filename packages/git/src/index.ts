/**
 * @driftless/git: fetch a RootSync/RepoSync's Git source with the git CLI.
 *
 * One bare cache repository per sync is fetched into shallowly on each poll; each commit is
 * checked out once into its own immutable directory. Credentials reach git only through the
 * environment of the git processes (never argv, never a config file), and every failure is a
 * classified GitFetchError (KNV2004) whose message names the repository (redacted), the
 * branch or revision, and what to fix.
 *
 * @example
 * ```ts
 * import { GitFetcher, credentialsFromSecretData } from "@driftless/git";
 *
 * const fetcher = new GitFetcher({ cacheDir: "/var/cache/driftless", logger });
 * const spec = rootSync.spec.git; // { repo, branch, revision, dir, auth, noSSLVerify, ... }
 * const credentials = credentialsFromSecretData({
 *   auth: spec.auth,
 *   secretData: decodedSecret, // { username, token } or { ssh, known_hosts }
 *   caCertData: decodedCaSecret, // { cert }
 *   repo: spec.repo,
 * });
 *
 * // Each poll: one `git ls-remote`; fetch only when the remote moved.
 * const remote = await fetcher.resolveRemote({ spec, credentials, signal });
 * if (remote.commit !== status.lastSyncedCommit) {
 *   const { commit, sourceDir } = await fetcher.fetch({ syncKey: "root-reconciler", spec, credentials, signal });
 *   // read manifests from sourceDir; it never changes under you
 * }
 * ```
 */
export { GitFetcher } from "./fetcher.ts";
export { ProcessEnd, runProcessGroup } from "./process-group.ts";
export type { ProcessGroupOptions, ProcessGroupResult } from "./process-group.ts";
export type { FetchRequest, GitFetcherOptions, ResolveRequest } from "./fetcher.ts";
export { GitFailureReason, GitFetchError } from "./errors.ts";
export { credentialsFromSecretData, SecretKey } from "./secret-data.ts";
export type { SecretDataInput } from "./secret-data.ts";
export { GitAuthType } from "./types.ts";
export type {
  FetchResult,
  GitCredentials,
  GitLogger,
  GitSourceSpec,
  NoCredentials,
  RemoteRevision,
  SshCredentials,
  TokenCredentials,
} from "./types.ts";
