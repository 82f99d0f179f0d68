import assert from "node:assert/strict";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ErrorClass } from "@driftless/api";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { GitFetcher } from "./fetcher.ts";
import type { GitLogger } from "./types.ts";
import { SourceRepo, tempDir } from "./testing/git-fixture.ts";
import { generateKey, hasSshd, startSshd } from "./testing/sshd.ts";
import type { SshKeyPair, TestSshd } from "./testing/sshd.ts";

/**
 * git over ssh against a real OpenSSH server on a loopback port. Needs sshd (Debian package
 * `openssh-server`) and ssh/ssh-keygen (`openssh-client`); skipped without sshd, except under CI.
 */

const skip =
  !(await hasSshd()) && process.env.CI === undefined ? "sshd is not installed (apt-get install openssh-server)" : false;

let root: { path: string; remove: () => Promise<void> };
let sshd: TestSshd;
let authorized: SshKeyPair;
let stranger: SshKeyPair;
let source: SourceRepo;
let sha: string;
let authTemp: string;
let warnings: string[];

function newFetcher(): GitFetcher {
  const logger: GitLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message) => warnings.push(message),
  };
  return new GitFetcher({ cacheDir: join(root.path, "cache"), tempDir: authTemp, logger });
}

async function failure(promise: Promise<unknown>): Promise<GitFetchError> {
  const error = await promise.then(
    () => assert.fail("expected a failure"),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof GitFetchError, String(error));
  return error;
}

void describe("GitFetcher over ssh", { skip }, () => {
  before(async () => {
    root = await tempDir("ssh");
    authorized = await generateKey(root.path, "authorized");
    stranger = await generateKey(root.path, "stranger");
    sshd = await startSshd(root.path, [authorized.publicKey]);
    source = await SourceRepo.create(join(root.path, "repos"));
    sha = await source.commit({ "config/a.yaml": "a\n" });
    await source.push("master");
    authTemp = join(root.path, "auth-temp");
    await mkdir(authTemp);
  });
  after(async () => {
    await sshd.close();
    await root.remove();
  });

  void it("fetches with the key and verifies the host against known_hosts; the key file is gone afterwards", async () => {
    warnings = [];
    const credentials = { auth: "ssh", privateKey: authorized.privateKey, knownHosts: sshd.knownHostsLine } as const;
    const spec = { repo: sshd.url(source.bare), auth: "ssh", dir: "config" };

    assert.equal((await newFetcher().resolveRemote({ spec, credentials })).commit, sha);
    const result = await newFetcher().fetch({ syncKey: "strict", spec, credentials });

    assert.equal(result.commit, sha);
    assert.equal(result.sourceDir, join(result.dir, "config"));
    assert.deepEqual(warnings, []);
    assert.deepEqual(await readdir(authTemp), []);
  });

  void it("accepts any host key when the Secret has no known_hosts, as Config Sync does, and warns", async () => {
    warnings = [];
    // Also: a key that lost its final newline in the Secret still loads.
    const credentials = { auth: "ssh", privateKey: authorized.privateKey.trimEnd() } as const;
    const result = await newFetcher().fetch({ syncKey: "lax", spec: { repo: sshd.url(source.bare) }, credentials });
    assert.equal(result.commit, sha);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? "", /host key is not verified/);
  });

  void it("refuses a host whose key is not the one in known_hosts, terminally", async () => {
    const impostor = `[127.0.0.1]:${String(sshd.port)} ${stranger.publicKey.split(" ").slice(0, 2).join(" ")}\n`;
    const error = await failure(
      newFetcher().resolveRemote({
        spec: { repo: sshd.url(source.bare) },
        credentials: { auth: "ssh", privateKey: authorized.privateKey, knownHosts: impostor },
      }),
    );
    assert.equal(error.reason, GitFailureReason.HostKeyRejected);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.match(error.message, /known_hosts/);
  });

  void it("quotes ssh's 'No ... host key is known' for a known_hosts that lists no key of the host, as Config Sync's error does", async () => {
    const error = await failure(
      newFetcher().resolveRemote({
        spec: { repo: sshd.url(source.bare) },
        credentials: { auth: "ssh", privateKey: authorized.privateKey, knownHosts: "invalid value" },
      }),
    );
    assert.equal(error.reason, GitFailureReason.HostKeyRejected);
    assert.match(error.message, /No ED25519 host key is known/);
  });

  void it("reports a key the server does not accept as rejected credentials, terminally, without the key", async () => {
    const error = await failure(
      newFetcher().fetch({
        syncKey: "stranger",
        spec: { repo: sshd.url(source.bare) },
        credentials: { auth: "ssh", privateKey: stranger.privateKey, knownHosts: sshd.knownHostsLine },
      }),
    );
    assert.equal(error.reason, GitFailureReason.AuthRejected);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.match(error.message, /credentials were rejected/);
    assert.match(error.message, /Permission denied \(publickey\)/);
    const keyBody = stranger.privateKey.split("\n")[1] ?? "";
    assert.ok(keyBody.length > 10 && !error.message.includes(keyBody));
    assert.deepEqual(await readdir(authTemp), []);
  });

  void it("reports a malformed private key as rejected credentials", async () => {
    const error = await failure(
      newFetcher().resolveRemote({
        spec: { repo: sshd.url(source.bare) },
        credentials: {
          auth: "ssh",
          privateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n-----END OPENSSH PRIVATE KEY-----\n",
        },
      }),
    );
    assert.equal(error.reason, GitFailureReason.AuthRejected);
  });
});
