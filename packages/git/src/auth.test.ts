import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { redactCredentials } from "@driftless/api";
import { openAuthSession } from "./auth.ts";
import type { AuthSession } from "./auth.ts";
import { credentialHelperProgram } from "./credential-helper.ts";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { baseGitEnv } from "./git-env.ts";
import { parseRepoUrl } from "./repo-url.ts";
import { tempDir } from "./testing/git-fixture.ts";
import type { GitCredentials, GitLogger } from "./types.ts";

const execFileAsync = promisify(execFile);
const quiet: GitLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined };
let root: { path: string; remove: () => Promise<void> };

before(async () => {
  root = await tempDir("auth");
});
after(async () => {
  await root.remove();
});

function open(repo: string, credentials: GitCredentials, noSSLVerify = false): Promise<AuthSession> {
  return openAuthSession({
    credentials,
    repo: parseRepoUrl(repo),
    displayRepo: repo,
    noSSLVerify,
    tempRoot: root.path,
    logger: quiet,
  });
}

/** Asks real git for credentials the way it does before an authenticated request. */
async function gitCredentialFill(session: AuthSession, url: string): Promise<string> {
  const env = baseGitEnv(process.env, ["https"], session.env);
  const child = execFileAsync("git", ["credential", "fill"], { env });
  child.child.stdin?.end(`url=${url}\n\n`);
  return (await child).stdout;
}

void describe("openAuthSession", () => {
  void it("gives git the token through a credential helper for the repository's origin only", async () => {
    const session = await open("https://git.example.com/org/repo.git", {
      auth: "token",
      username: "bot",
      token: "s3cret",
    });
    try {
      const answer = await gitCredentialFill(session, "https://git.example.com/org/repo.git");
      assert.match(answer, /^username=bot$/m);
      assert.match(answer, /^password=s3cret$/m);
      // Another origin (a redirect, say) gets nothing, so git fails instead of sending the token.
      await assert.rejects(
        gitCredentialFill(session, "https://elsewhere.example.com/x.git"),
        /terminal prompts disabled/,
      );
    } finally {
      await session.dispose();
    }
  });

  void it("keeps the token out of the helper program and the config: only in one environment variable", async () => {
    const session = await open("https://h/r", { auth: "token", username: "bot", token: "s3cret" });
    const holders = Object.entries(session.env).filter(([, value]) => value.includes("s3cret"));
    assert.deepEqual(
      holders.map(([key]) => key),
      ["DRIFTLESS_GIT_PASSWORD"],
    );
    assert.ok(!credentialHelperProgram.includes("s3cret"));
    assert.deepEqual(session.secrets, ["s3cret"]);
    await session.dispose();
  });

  void it("scrubs the token but not the Secret's username, so git's words stay whole", async () => {
    const session = await open("http://127.0.0.1:45597/remote.git", {
      auth: "token",
      username: "git",
      token: "t0ken-1",
    });
    await session.dispose();
    const said = "fatal: Authentication failed for 'http://127.0.0.1:45597/remote.git/' (t0ken-1)";
    assert.equal(
      redactCredentials(said, session.secrets),
      "fatal: Authentication failed for 'http://127.0.0.1:45597/remote.git/' (***)",
    );
    const github = "remote: Invalid username or password. fatal: https://github.com/org/config-repo.git spec.git.auth";
    const user = await open("https://github.com/org/config-repo.git", {
      auth: "token",
      username: "user",
      token: "ghp_x1",
    });
    await user.dispose();
    assert.equal(redactCredentials(github, user.secrets), github);
  });

  void it("scrubs a token written as the URL's user, and a proxy's password as written and decoded", async () => {
    const session = await openAuthSession({
      credentials: { auth: "none" },
      repo: parseRepoUrl("https://ghp_tok3n@h/r"),
      displayRepo: "https://***@h/r",
      noSSLVerify: false,
      proxy: "http://proxyuser:Pr0xy%23Secret@proxy.corp:3128",
      tempRoot: root.path,
      logger: quiet,
    });
    await session.dispose();
    assert.deepEqual(session.secrets, ["ghp_tok3n", "Pr0xy%23Secret", "Pr0xy#Secret"]);
  });

  void it("writes the ssh key and known_hosts to a private directory and deletes them on dispose", async () => {
    const session = await open("ssh://git@h/r", {
      auth: "ssh",
      privateKey: "KEY\r\nBODY",
      knownHosts: "h ssh-ed25519 AAAA\n",
    });
    const match = /-i (\S+)/.exec(session.env.GIT_SSH_COMMAND ?? "");
    const keyPath = match?.[1] ?? assert.fail("no key path");
    assert.equal(await readFile(keyPath, "utf8"), "KEY\nBODY\n");
    assert.equal((await stat(keyPath)).mode & 0o777, 0o600);
    assert.equal((await stat(join(keyPath, ".."))).mode & 0o777, 0o700);
    assert.match(session.env.GIT_SSH_COMMAND ?? "", /StrictHostKeyChecking=yes/);
    await session.dispose();
    assert.deepEqual(await readdir(root.path), []);
  });

  void it("points git at the CA bundle and honours noSSLVerify", async () => {
    const session = await open("https://h/r", { auth: "none", caCert: "-----BEGIN CERTIFICATE-----\n" }, true);
    assert.equal(await readFile(session.env.GIT_SSL_CAINFO ?? "", "utf8"), "-----BEGIN CERTIFICATE-----\n");
    assert.equal(session.env.GIT_SSL_NO_VERIFY, "true");
    await session.dispose();
  });

  void it("refuses a token with a line break inside, which would inject credential-protocol lines", async () => {
    await assert.rejects(
      open("https://h/r", { auth: "token", username: "bot", token: "a\nprotocol=http" }),
      (error: unknown) => {
        assert.ok(error instanceof GitFetchError);
        assert.equal(error.reason, GitFailureReason.AuthRejected);
        assert.ok(!error.message.includes("protocol=http"));
        return true;
      },
    );
  });
});

void describe("baseGitEnv", () => {
  void it("drops the host's git, ssh-agent and locale settings and forbids prompts", () => {
    const env = baseGitEnv(
      {
        PATH: "/bin",
        GIT_DIR: "/elsewhere",
        GIT_ASKPASS: "/x",
        SSH_AUTH_SOCK: "/agent",
        LANG: "de_DE.UTF-8",
        HTTPS_PROXY: "http://proxy:3128",
      },
      ["https", "ssh"],
    );
    assert.equal(env.GIT_DIR, undefined);
    assert.equal(env.GIT_ASKPASS, undefined);
    assert.equal(env.SSH_AUTH_SOCK, undefined);
    assert.equal(env.LANG, undefined);
    assert.equal(env.LC_ALL, "C");
    assert.equal(env.GIT_TERMINAL_PROMPT, "0");
    assert.equal(env.GIT_CONFIG_GLOBAL, "/dev/null");
    assert.equal(env.GIT_CONFIG_NOSYSTEM, "1");
    assert.equal(env.GIT_ALLOW_PROTOCOL, "https:ssh");
    assert.equal(env.HTTPS_PROXY, "http://proxy:3128");
  });
});
