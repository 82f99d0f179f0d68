import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ErrorClass } from "@driftless/api";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { GitFetcher } from "./fetcher.ts";
import { SourceRepo, tempDir } from "./testing/git-fixture.ts";
import { startGitHttpServer } from "./testing/git-http-server.ts";
import type { GitHttpServer } from "./testing/git-http-server.ts";
import { hasOpenssl, selfSignedCert } from "./testing/tls.ts";
import type { SelfSignedCert } from "./testing/tls.ts";

/**
 * HTTPS with a self-signed certificate: rejected by default, accepted with its CA from
 * caCertSecretRef, or with noSSLVerify. Needs the openssl CLI (Debian package `openssl`);
 * skipped without it, except under CI where a missing tool must fail the run.
 */

const opensslMissing = !(await hasOpenssl());
const skip = opensslMissing && process.env.CI === undefined ? "openssl is not installed" : false;

let root: { path: string; remove: () => Promise<void> };
let cert: SelfSignedCert;
let otherCert: SelfSignedCert;
let server: GitHttpServer;
let source: SourceRepo;
let sha: string;
const username = "bot";
const token = "https-token-SECRET";

void describe("GitFetcher over HTTPS", { skip }, () => {
  before(async () => {
    root = await tempDir("https");
    cert = await selfSignedCert(root.path);
    await mkdir(join(root.path, "other"));
    otherCert = await selfSignedCert(join(root.path, "other"));
    source = await SourceRepo.create(join(root.path, "repos"));
    sha = await source.commit({ "a.yaml": "a\n" });
    await source.push("master");
    server = await startGitHttpServer({ projectRoot: join(root.path, "repos"), username, token, tls: cert });
  });
  after(async () => {
    await server.close();
    await root.remove();
  });

  const fetcher = (): GitFetcher => new GitFetcher({ cacheDir: join(root.path, "cache") });
  const spec = (): { repo: string } => ({ repo: server.url("remote.git") });

  void it("rejects a certificate it cannot verify, terminally, pointing at caCertSecretRef and noSSLVerify", async () => {
    const error = await fetcher()
      .fetch({ syncKey: "s", spec: spec(), credentials: { auth: "token", username, token } })
      .then(
        () => assert.fail("expected a TLS failure"),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof GitFetchError);
    assert.equal(error.reason, GitFailureReason.TlsRejected);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.match(error.message, /caCertSecretRef/);
    assert.match(error.message, /noSSLVerify/);
  });

  void it("rejects the server when the CA given is a different one", async () => {
    const error = await fetcher()
      .resolveRemote({ spec: spec(), credentials: { auth: "token", username, token, caCert: otherCert.cert } })
      .then(
        () => assert.fail("expected a TLS failure"),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof GitFetchError);
    assert.equal(error.reason, GitFailureReason.TlsRejected);
  });

  void it("verifies the server with the CA from caCertSecretRef", async () => {
    const result = await fetcher().fetch({
      syncKey: "ca",
      spec: spec(),
      credentials: { auth: "token", username, token, caCert: cert.cert },
    });
    assert.equal(result.commit, sha);
  });

  void it("skips verification with noSSLVerify", async () => {
    const result = await fetcher().fetch({
      syncKey: "noverify",
      spec: { ...spec(), noSSLVerify: true },
      credentials: { auth: "token", username, token },
    });
    assert.equal(result.commit, sha);
  });
});
