import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GitFetchError } from "./errors.ts";
import { credentialsFromSecretData } from "./secret-data.ts";

const repo = "https://bot:pw@example.com/r.git";

void describe("credentialsFromSecretData", () => {
  void it("maps Config Sync's Secret keys to typed credentials", () => {
    assert.deepEqual(credentialsFromSecretData({ auth: "token", secretData: { username: "u", token: "t" }, repo }), {
      auth: "token",
      username: "u",
      token: "t",
      caCert: undefined,
    });
    assert.deepEqual(
      credentialsFromSecretData({
        auth: "ssh",
        secretData: { ssh: "KEY", known_hosts: "h k" },
        caCertData: { cert: "CA" },
        repo,
      }),
      { auth: "ssh", privateKey: "KEY", knownHosts: "h k", caCert: "CA" },
    );
    assert.deepEqual(credentialsFromSecretData({ auth: "", repo }), { auth: "none", caCert: undefined });
  });

  void it("names the missing key and the Secret as Config Sync words it, never a value, and redacts the URL", () => {
    assert.throws(
      () => credentialsFromSecretData({ auth: "token", secretData: { token: "t0ken" }, secretName: "git-creds", repo }),
      (error: unknown) => {
        assert.ok(error instanceof GitFetchError);
        assert.equal(error.errorClass, "terminal");
        assert.equal(
          error.message,
          'git authType was set as "token" but "username" key is not present in "git-creds" Secret',
        );
        assert.ok(!error.message.includes("t0ken") && !error.repo.includes("pw"));
        return true;
      },
    );
    assert.throws(
      () => credentialsFromSecretData({ auth: "ssh", secretData: {}, repo }),
      /but "ssh" key is not present in/,
    );
    assert.throws(
      () => credentialsFromSecretData({ auth: "none", caCertData: {}, repo }),
      /caCertSecretRef was set, but "cert" key is not present in /,
    );
    assert.throws(
      () => credentialsFromSecretData({ auth: "cookiefile", secretData: {}, secretName: "jar", repo }),
      /git authType was set as "cookiefile" but "cookie_file" key is not present in "jar" Secret/,
    );
    assert.throws(() => credentialsFromSecretData({ auth: "githubapp", repo }), /not supported by driftless/);
  });
});

void describe("proxies in the token Secret", () => {
  void it("reads https_proxy and http_proxy beside username and token", () => {
    const credentials = credentialsFromSecretData({
      auth: "token",
      secretData: { username: "u", token: "t", https_proxy: "http://proxy:3128\n", http_proxy: "http://plain:3128" },
      repo,
    });
    assert.deepEqual(credentials, {
      auth: "token",
      username: "u",
      token: "t",
      caCert: undefined,
      httpsProxy: "http://proxy:3128",
      httpProxy: "http://plain:3128",
    });
  });

  void it("refuses the Google-only and GitHub App auth types naming what to use instead", () => {
    assert.throws(
      () => credentialsFromSecretData({ auth: "gcenode", repo }),
      /not supported by driftless.*use auth "token"/,
    );
    assert.throws(() => credentialsFromSecretData({ auth: "githubapp", repo }), /deploy key/);
  });
});
