/**
 * @driftless/git/testing: real Git servers for tests of code that fetches (the reconciler's
 * integration tests): a smart-HTTP server over `git http-backend` with optional Basic auth and TLS, and
 * an HTTP proxy (tinyproxy) to put in front of it.
 */
export { startGitHttpServer } from "./git-http-server.ts";
export type { GitHttpServer, GitHttpServerOptions, RecordedRequest } from "./git-http-server.ts";
export { startHttpProxy } from "./http-proxy.ts";
export type { HttpProxy } from "./http-proxy.ts";
export { stallingGit } from "./stalling-git.ts";
export type { StallingGit } from "./stalling-git.ts";
export { selfSignedCert } from "./tls.ts";
export type { SelfSignedCert } from "./tls.ts";
