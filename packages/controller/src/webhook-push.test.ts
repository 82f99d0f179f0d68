import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { parseWebhook, providerOf, verify, WebhookProvider } from "./webhook-push.ts";

const secret = "s3cret";
const sign = (body: Buffer, key = secret): string => `sha256=${createHmac("sha256", key).update(body).digest("hex")}`;

const githubPush = Buffer.from(
  JSON.stringify({
    ref: "refs/heads/main",
    after: "a".repeat(40),
    repository: { clone_url: "https://github.com/acme/config.git", ssh_url: "git@github.com:acme/config.git" },
  }),
);

test("GitHub: accepts the right HMAC, refuses a missing, wrong or other-key signature", () => {
  const headers = { "x-github-event": "push", "x-hub-signature-256": sign(githubPush) };
  assert.equal(providerOf(headers), WebhookProvider.GitHub);
  assert.equal(verify("github", headers, githubPush, secret), true);
  assert.equal(verify("github", { "x-github-event": "push" }, githubPush, secret), false);
  assert.equal(
    verify("github", { ...headers, "x-hub-signature-256": sign(githubPush, "other") }, githubPush, secret),
    false,
  );
  assert.equal(
    verify("github", headers, Buffer.concat([githubPush, Buffer.from(" ")]), secret),
    false,
    "a changed body",
  );
  assert.equal(verify("github", { ...headers, "x-hub-signature-256": "sha256=abc" }, githubPush, secret), false);
});

test("GitHub: a push names its branch, commit and every repository URL; other events are ignored", () => {
  const parsed = parseWebhook("github", { "x-github-event": "push" }, githubPush);
  assert.deepEqual(parsed, {
    kind: "push",
    push: {
      branch: "main",
      commit: "a".repeat(40),
      repoUrls: ["https://github.com/acme/config.git", "git@github.com:acme/config.git"],
    },
  });
  assert.equal(parseWebhook("github", { "x-github-event": "ping" }, Buffer.from("{}")).kind, "ignored");
  const note = Buffer.from(
    JSON.stringify({ ref: "refs/notes/commits", after: "b".repeat(40), repository: { clone_url: "x" } }),
  );
  assert.equal(parseWebhook("github", { "x-github-event": "push" }, note).kind, "ignored");
  const deleted = Buffer.from(
    JSON.stringify({ ref: "refs/heads/main", after: "0".repeat(40), repository: { clone_url: "x" } }),
  );
  assert.equal(parseWebhook("github", { "x-github-event": "push" }, deleted).kind, "ignored");
});

test("GitLab: the secret token must match exactly; the push is read from project URLs", () => {
  const body = Buffer.from(
    JSON.stringify({
      object_kind: "push",
      ref: "refs/heads/dev",
      checkout_sha: "c".repeat(40),
      project: { git_http_url: "https://gitlab.com/g/p.git" },
    }),
  );
  const headers = { "x-gitlab-event": "Push Hook", "x-gitlab-token": secret };
  assert.equal(providerOf(headers), WebhookProvider.GitLab);
  assert.equal(verify("gitlab", headers, body, secret), true);
  assert.equal(verify("gitlab", { ...headers, "x-gitlab-token": "s3cre" }, body, secret), false);
  assert.equal(verify("gitlab", { "x-gitlab-event": "Push Hook" }, body, secret), false);
  assert.deepEqual(parseWebhook("gitlab", headers, body), {
    kind: "push",
    push: { branch: "dev", commit: "c".repeat(40), repoUrls: ["https://gitlab.com/g/p.git"] },
  });
});

test("generic: signed JSON with repo and branch; malformed bodies are invalid", () => {
  const body = Buffer.from(JSON.stringify({ repo: "https://git.example.com/a/b", branch: "main" }));
  assert.equal(providerOf({}), WebhookProvider.Generic);
  assert.equal(verify("generic", { "x-driftless-signature": sign(body) }, body, secret), true);
  assert.equal(verify("generic", {}, body, secret), false);
  assert.deepEqual(parseWebhook("generic", {}, body), {
    kind: "push",
    push: { repoUrls: ["https://git.example.com/a/b"], branch: "main", commit: undefined },
  });
  assert.equal(parseWebhook("generic", {}, Buffer.from("not json")).kind, "invalid");
  assert.equal(parseWebhook("generic", {}, Buffer.from(JSON.stringify({ repo: "x" }))).kind, "invalid");
});

test("an empty secret verifies nothing", () => {
  const body = Buffer.from("{}");
  assert.equal(verify("generic", { "x-driftless-signature": sign(body, "") }, body, ""), false);
  assert.equal(verify("gitlab", { "x-gitlab-token": "" }, body, ""), false);
});

test("a tag push names the tag; a deleted tag is ignored (GitHub and GitLab)", () => {
  const github = (after: string): Buffer =>
    Buffer.from(
      JSON.stringify({ ref: "refs/tags/v1.0.0", after, repository: { clone_url: "https://github.com/a/b" } }),
    );
  assert.deepEqual(parseWebhook("github", { "x-github-event": "push" }, github("b".repeat(40))), {
    kind: "push",
    push: { repoUrls: ["https://github.com/a/b"], branch: "v1.0.0", commit: "b".repeat(40), tag: true },
  });
  assert.equal(parseWebhook("github", { "x-github-event": "push" }, github("0".repeat(40))).kind, "ignored");

  const gitlab = Buffer.from(
    JSON.stringify({
      object_kind: "tag_push",
      ref: "refs/tags/v2",
      checkout_sha: "c".repeat(40),
      project: { git_http_url: "https://gitlab.com/g/p.git" },
    }),
  );
  assert.deepEqual(parseWebhook("gitlab", { "x-gitlab-event": "Tag Push Hook" }, gitlab), {
    kind: "push",
    push: { repoUrls: ["https://gitlab.com/g/p.git"], branch: "v2", commit: "c".repeat(40), tag: true },
  });
  assert.equal(parseWebhook("gitlab", { "x-gitlab-event": "Push Hook" }, gitlab).kind, "ignored", "kinds disagree");
});

test("a URL longer than any sync may name is dropped from a push", () => {
  const long = `https://github.com/${"a".repeat(4096)}`;
  const body = (repository: unknown): Buffer =>
    Buffer.from(JSON.stringify({ ref: "refs/heads/main", after: "a".repeat(40), repository }));
  const parsed = parseWebhook(
    "github",
    { "x-github-event": "push" },
    body({ clone_url: long, ssh_url: "git@github.com:a/b.git" }),
  );
  assert.deepEqual(parsed.kind === "push" ? parsed.push.repoUrls : parsed, ["git@github.com:a/b.git"]);
  assert.equal(parseWebhook("github", { "x-github-event": "push" }, body({ clone_url: long })).kind, "invalid");
  const generic = Buffer.from(JSON.stringify({ repo: long, branch: "main" }));
  assert.equal(parseWebhook("generic", {}, generic).kind, "invalid");
});
