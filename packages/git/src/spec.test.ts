import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KnvCode } from "@driftless/api";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { Transport } from "./repo-url.ts";
import { planFetch } from "./spec.ts";
import type { GitCredentials, GitSourceSpec } from "./types.ts";

const all = [Transport.Https, Transport.Http, Transport.Ssh, Transport.Git];
const none: GitCredentials = { auth: "none" };
const repo = "https://example.com/org/repo.git";

function invalid(spec: GitSourceSpec, credentials: GitCredentials = none): GitFetchError {
  try {
    planFetch(spec, credentials, all);
  } catch (error) {
    assert.ok(error instanceof GitFetchError);
    assert.equal(error.reason, GitFailureReason.InvalidSpec);
    assert.equal(error.code, KnvCode.InvalidSync);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(spec)} to be rejected`);
}

void describe("planFetch", () => {
  void it("follows master when neither branch nor revision is set, from the repository root", () => {
    const plan = planFetch({ repo }, none, all);
    assert.deepEqual(plan.target, {
      kind: "branch",
      candidates: ["refs/heads/master", "refs/master", "refs/tags/master"],
    });
    assert.equal(plan.dir, ".");
    assert.equal(plan.description, 'branch "master"');
  });

  void it("treats revision HEAD and an empty revision as the tip of the branch", () => {
    for (const revision of ["HEAD", "", undefined]) {
      assert.deepEqual(planFetch({ repo, branch: "main", revision }, none, all).target, {
        kind: "branch",
        candidates: ["refs/heads/main", "refs/main", "refs/tags/main"],
      });
    }
  });

  void it("lets a revision override the branch: full SHAs directly, names in git's order (refs/, tag, branch)", () => {
    const sha = "A".repeat(40);
    assert.deepEqual(planFetch({ repo, branch: "main", revision: sha }, none, all).target, {
      kind: "commit",
      sha: "a".repeat(40),
    });
    assert.deepEqual(planFetch({ repo, revision: "v1.2.3" }, none, all).target, {
      kind: "ref",
      name: "v1.2.3",
      candidates: ["refs/v1.2.3", "refs/tags/v1.2.3", "refs/heads/v1.2.3"],
    });
    assert.deepEqual(planFetch({ repo, revision: "pull/7/head" }, none, all).target, {
      kind: "ref",
      name: "pull/7/head",
      candidates: ["refs/pull/7/head", "refs/tags/pull/7/head", "refs/heads/pull/7/head"],
    });
    assert.deepEqual(planFetch({ repo, branch: "refs/tags/v1" }, none, all).target, {
      kind: "branch",
      candidates: ["refs/tags/v1"],
    });
    assert.deepEqual(planFetch({ repo, revision: "refs/changes/1/2" }, none, all).target, {
      kind: "ref",
      name: "refs/changes/1/2",
      candidates: ["refs/changes/1/2"],
    });
  });

  void it("normalises dir: leading and trailing slashes, ./ and inner .. that stay inside", () => {
    assert.equal(planFetch({ repo, dir: "/a/b/" }, none, all).dir, "a/b");
    assert.equal(planFetch({ repo, dir: "./a/../c" }, none, all).dir, "c");
    assert.equal(planFetch({ repo, dir: "/" }, none, all).dir, ".");
  });

  void it("rejects a dir that leaves the repository", () => {
    assert.match(invalid({ repo, dir: "../x" }).message, /outside the repository/);
    assert.match(invalid({ repo, dir: "a/../../x" }).message, /outside the repository/);
  });

  void it("rejects branch and revision values that git would read as options or that are not ref names", () => {
    invalid({ repo, branch: "--upload-pack=evil" });
    invalid({ repo, branch: "a..b" });
    invalid({ repo, branch: "with space" });
    invalid({ repo, revision: "-x" });
    invalid({ repo, revision: "v1:evil" });
  });

  void it("rejects URLs git would run commands for or read as options", () => {
    invalid({ repo: "ext::sh -c touch% /tmp/pwned" });
    invalid({ repo: "--upload-pack=evil" });
    invalid({ repo: "" });
  });

  void it("rejects file URLs unless the file transport is allowed", () => {
    assert.match(invalid({ repo: "file:///srv/r.git" }).message, /file transport is not allowed/);
    assert.equal(planFetch({ repo: "file:///srv/r.git" }, none, [...all, Transport.File]).repo.transport, "file");
  });

  void it("checks that the credentials fit spec.git.auth and the URL's transport", () => {
    const token: GitCredentials = { auth: "token", username: "u", token: "t" };
    const ssh: GitCredentials = { auth: "ssh", privateKey: "k" };
    assert.match(invalid({ repo, auth: "token" }).message, /"token" but none credentials/);
    assert.match(invalid({ repo, auth: "gcenode" }).message, /not supported by driftless/);
    assert.match(invalid({ repo: "git@host:org/repo", auth: "token" }, token).message, /needs an http\(s\)/);
    assert.match(invalid({ repo, auth: "ssh" }, ssh).message, /needs an ssh/);
    assert.equal(planFetch({ repo, auth: "token" }, token, all).repo.url, repo);
  });

  void it("takes any auth for a local file:// repository, which asks for no credentials (git-sync fetches it whatever the auth)", () => {
    const file = "file:///srv/r.git";
    const withFile = [...all, Transport.File];
    const token: GitCredentials = { auth: "token", username: "u", token: "t" };
    const ssh: GitCredentials = { auth: "ssh", privateKey: "k" };
    const cookie: GitCredentials = { auth: "cookiefile", cookieFile: "jar" };
    for (const credentials of [token, ssh, cookie])
      assert.equal(planFetch({ repo: file, auth: credentials.auth }, credentials, withFile).repo.transport, "file");
  });

  void it("never puts credentials from the URL in a message", () => {
    const error = invalid({ repo: "https://u:hunter2@example.com/r", dir: "../x" });
    assert.ok(!error.message.includes("hunter2") && !error.repo.includes("hunter2"));
  });

  void it("says a URL with credentials that does not parse is not a valid URL, without the credentials", () => {
    for (const bad of ["https://u:hunter2@127.0.0.1:99999/x.git", "https://u:hunter2%zz@example.com/r"]) {
      const error = invalid({ repo: bad });
      assert.match(error.message, /is not a valid URL/);
      assert.ok(!error.message.includes("hunter2") && !error.repo.includes("hunter2"), error.message);
    }
  });

  void it("keeps a password holding '#', '?' or '/' out of the message, though it cuts the URL short for a parser", () => {
    for (const password of ["Hunter#2secret", "Hunter?2secret", "Hunter/2secret"]) {
      const error = invalid({ repo: `https://deploy:${password}@127.0.0.1:1/x.git` });
      assert.equal(error.repo, "https://***@127.0.0.1:1/x.git", error.message);
      assert.ok(!error.message.includes("2secret"), error.message);
    }
  });
});

void describe("planFetch: proxy and depth", () => {
  const token: GitCredentials = {
    auth: "token",
    username: "u",
    token: "t",
    httpsProxy: "http://secret-proxy:3128",
    httpProxy: "http://plain-proxy:3128",
  };

  void it("takes spec.git.proxy first, else the Secret's key for the repository's scheme", () => {
    assert.equal(planFetch({ repo, proxy: "http://spec-proxy:8080" }, token, all).proxy, "http://spec-proxy:8080");
    assert.equal(planFetch({ repo }, token, all).proxy, "http://secret-proxy:3128");
    assert.equal(planFetch({ repo: "http://example.com/r.git" }, token, all).proxy, "http://plain-proxy:3128");
    assert.equal(planFetch({ repo }, none, all).proxy, undefined);
  });

  void it("sends ssh and git:// directly: libcurl's proxy does not apply to them", () => {
    assert.equal(planFetch({ repo: "git://example.com/r.git", proxy: "http://p:1" }, none, all).proxy, undefined);
  });

  void it("refuses a proxy that is not a proxy URL, without printing its password", () => {
    const error = invalid({ repo, proxy: "ftp://user:hunter2@proxy:21" });
    assert.match(error.message, /spec.git.proxy .* is not a proxy URL/);
    assert.doesNotMatch(error.message, /hunter2/);
    assert.match(invalid({ repo }, { ...token, httpsProxy: "proxy host" }).message, /https_proxy key/);
    const hashed = invalid({ repo }, { ...token, httpsProxy: "http://proxyuser:Pr0xy#Secret@proxy.corp:3128" });
    assert.match(hashed.message, /https_proxy key "http:\/\/\*\*\*@proxy\.corp:3128" is not a proxy URL/);
  });

  void it("fetches one commit by default, N with gitSyncDepth N, and all history with 0", () => {
    assert.equal(planFetch({ repo }, none, all).depth, 1);
    assert.equal(planFetch({ repo, depth: 5 }, none, all).depth, 5);
    assert.equal(planFetch({ repo, depth: 0 }, none, all).depth, undefined);
    assert.match(invalid({ repo, depth: -1 }).message, /gitSyncDepth/);
  });
});
