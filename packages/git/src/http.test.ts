import assert from "node:assert/strict";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ErrorClass } from "@driftless/api";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { GitFetcher } from "./fetcher.ts";
import type { GitLogger } from "./types.ts";
import { filesContaining, SourceRepo, tempDir } from "./testing/git-fixture.ts";
import { startGitHttpServer } from "./testing/git-http-server.ts";
import type { GitHttpServer } from "./testing/git-http-server.ts";
import { recordingGit } from "./testing/recording-git.ts";
import type { RecordingGit } from "./testing/recording-git.ts";

/** Fetching over smart HTTP from a real `git http-backend`, with Basic auth. */

const username = "driftless-bot";
const token = "tok-3f9c1e27-SECRET";

let root: { path: string; remove: () => Promise<void> };
const servers: GitHttpServer[] = [];
let counter = 0;

before(async () => {
  root = await tempDir("http");
});
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await root.remove();
});

interface Setup {
  readonly source: SourceRepo;
  readonly server: GitHttpServer;
  readonly fetcher: GitFetcher;
  readonly recorder: RecordingGit;
  readonly base: string;
  readonly authTemp: string;
  readonly logs: string[];
}

async function fixture(options: { auth?: boolean; protocolV2?: boolean; cookie?: string } = {}): Promise<Setup> {
  counter += 1;
  const base = join(root.path, `case-${String(counter)}`);
  const source = await SourceRepo.create(base);
  const server = await startGitHttpServer({
    projectRoot: base,
    ...(options.auth === false || options.cookie !== undefined ? {} : { username, token }),
    ...(options.cookie === undefined ? {} : { cookie: options.cookie }),
    protocolV2: options.protocolV2 ?? true,
  });
  servers.push(server);
  const recorder = await recordingGit(base);
  const authTemp = join(base, "auth-temp");
  await mkdir(authTemp);
  const logs: string[] = [];
  const logger: GitLogger = {
    debug: (message, fields) => logs.push(`${message} ${JSON.stringify(fields)}`),
    info: (message, fields) => logs.push(`${message} ${JSON.stringify(fields)}`),
    warn: (message, fields) => logs.push(`${message} ${JSON.stringify(fields)}`),
  };
  const fetcher = new GitFetcher({
    cacheDir: join(base, "cache"),
    gitBinary: recorder.binary,
    tempDir: authTemp,
    logger,
  });
  return { source, server, fetcher, recorder, base, authTemp, logs };
}

async function rejection(promise: Promise<unknown>): Promise<GitFetchError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof GitFetchError, `expected GitFetchError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected the promise to reject");
}

/** Everything a user or an operator could see: messages, causes, logs, argv, files. */
async function assertSecretNowhere(fx: Setup, secret: string, error?: GitFetchError): Promise<void> {
  if (error !== undefined) {
    assert.ok(!error.message.includes(secret), "message leaks the secret");
    assert.ok(
      !JSON.stringify(error, Object.getOwnPropertyNames(error)).includes(secret),
      "error fields leak the secret",
    );
    const cause = error.cause as { stderr?: string; message?: string } | undefined;
    assert.ok(
      !(cause?.stderr ?? "").includes(secret) && !(cause?.message ?? "").includes(secret),
      "cause leaks the secret",
    );
  }
  assert.ok(!fx.logs.join("\n").includes(secret), "logs leak the secret");
  for (const args of await fx.recorder.calls())
    assert.ok(!args.join(" ").includes(secret), `argv leaks the secret: ${args.join(" ")}`);
  assert.deepEqual(await filesContaining(join(fx.base, "cache"), secret), [], "a cache file holds the secret");
  assert.deepEqual(await readdir(fx.authTemp), [], "temporary auth files were left behind");
}

void describe("GitFetcher over HTTP with token auth", () => {
  void it("fetches with the Secret's username and token, which appear in no argv, file, log or message", async () => {
    const fx = await fixture();
    const sha = await fx.source.commit({ "a.yaml": "a\n" });
    await fx.source.push("master");
    const spec = { repo: fx.server.url("remote.git"), auth: "token" };
    const credentials = { auth: "token", username, token } as const;

    const remote = await fx.fetcher.resolveRemote({ spec, credentials });
    const result = await fx.fetcher.fetch({ syncKey: "s", spec, credentials });

    assert.equal(remote.commit, sha);
    assert.equal(result.commit, sha);
    assert.equal(await readFile(join(result.dir, "a.yaml"), "utf8"), "a\n");
    assert.ok(fx.server.requests.some((request) => request.authorized && request.status === 200));
    await assertSecretNowhere(fx, token);
  });

  void it("reports a wrong token as terminal: credentials were rejected, with the URL and no token", async () => {
    const fx = await fixture();
    await fx.source.commit({ "a.yaml": "a\n" });
    await fx.source.push("master");
    const wrong = "wrong-token-SECRET-42";
    const spec = { repo: fx.server.url("remote.git"), branch: "master" };

    const error = await rejection(
      fx.fetcher.fetch({ syncKey: "s", spec, credentials: { auth: "token", username, token: wrong } }),
    );

    assert.equal(error.reason, GitFailureReason.AuthRejected);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.match(error.message, /credentials were rejected/);
    assert.ok(error.message.includes(fx.server.url("remote.git")));
    assert.match(error.message, /branch "master"/);
    await assertSecretNowhere(fx, wrong, error);
  });

  void it("reports missing credentials against a private repository as terminal, without hanging on a prompt", async () => {
    const fx = await fixture();
    await fx.source.commit({ "a.yaml": "a\n" });
    await fx.source.push("master");

    const error = await rejection(fx.fetcher.resolveRemote({ spec: { repo: fx.server.url("remote.git") } }));

    assert.equal(error.reason, GitFailureReason.AuthRejected);
    assert.equal(error.errorClass, ErrorClass.Terminal);
  });

  void it("lifts a token written into the URL out of argv and redacts it from messages", async () => {
    const fx = await fixture();
    const sha = await fx.source.commit({ "a.yaml": "a\n" });
    await fx.source.push("master");
    const withToken = fx.server.url("remote.git").replace("://", `://${username}:${token}@`);

    const result = await fx.fetcher.fetch({ syncKey: "s", spec: { repo: withToken } });
    assert.equal(result.commit, sha);
    await assertSecretNowhere(fx, token);

    const wrongUrl = fx.server.url("remote.git").replace("://", `://${username}:bad-SECRET-pw@`);
    const error = await rejection(fx.fetcher.fetch({ syncKey: "s", spec: { repo: wrongUrl } }));
    assert.equal(error.reason, GitFailureReason.AuthRejected);
    assert.ok(error.message.includes(fx.server.url("remote.git").replace("://", "://***@")), error.message);
    await assertSecretNowhere(fx, "bad-SECRET-pw", error);
  });

  void it("accepts a token with the trailing newline `echo | base64` leaves in Secrets", async () => {
    const fx = await fixture();
    await fx.source.commit({ "a.yaml": "a\n" });
    await fx.source.push("master");
    const result = await fx.fetcher.fetch({
      syncKey: "s",
      spec: { repo: fx.server.url("remote.git") },
      credentials: { auth: "token", username: `${username}\n`, token: `${token}\n` },
    });
    assert.equal(result.fetched, true);
  });

  void it("treats 5xx answers as retryable Unavailable", async () => {
    const fx = await fixture();
    await fx.source.commit({ "a.yaml": "a\n" });
    await fx.source.push("master");
    fx.server.failNext(503, 100);

    const error = await rejection(
      fx.fetcher.fetch({
        syncKey: "s",
        spec: { repo: fx.server.url("remote.git") },
        credentials: { auth: "token", username, token },
      }),
    );

    assert.equal(error.reason, GitFailureReason.Unavailable);
    assert.equal(error.errorClass, ErrorClass.Retry);
    assert.match(error.message, /503/);
  });

  void it("kills git when the server never answers and reports a retryable Timeout", async () => {
    const fx = await fixture();
    fx.server.stall();
    const impatient = new GitFetcher({ cacheDir: join(fx.base, "cache"), timeoutMs: 1000 });

    const error = await rejection(impatient.resolveRemote({ spec: { repo: fx.server.url("remote.git") } }));

    assert.equal(error.reason, GitFailureReason.Timeout);
    assert.equal(error.errorClass, ErrorClass.Retry);
    assert.match(error.message, /did not finish within 1s/);
    assert.equal(fx.server.requests.length, 1, "the request reached the server");
  });

  void it("treats a refused connection as retryable", async () => {
    const fx = await fixture();
    const url = fx.server.url("remote.git");
    await fx.server.close();
    const error = await rejection(fx.fetcher.resolveRemote({ spec: { repo: url } }));
    assert.equal(error.reason, GitFailureReason.Unavailable);
    assert.equal(error.errorClass, ErrorClass.Retry);
  });

  void it("reports an unknown repository path (404) as terminal", async () => {
    const fx = await fixture({ auth: false });
    const error = await rejection(fx.fetcher.resolveRemote({ spec: { repo: fx.server.url("nope.git") } }));
    assert.equal(error.reason, GitFailureReason.RepoNotFound);
    assert.equal(error.errorClass, ErrorClass.Terminal);
  });

  void it("falls back to a full fetch when a protocol-v0 server refuses a commit by SHA", async () => {
    const fx = await fixture({ auth: false, protocolV2: false });
    const old = await fx.source.commit({ "a.yaml": "old\n" });
    await fx.source.commit({ "a.yaml": "new\n" });
    await fx.source.push("master");

    const result = await fx.fetcher.fetch({ syncKey: "s", spec: { repo: fx.server.url("remote.git"), revision: old } });

    assert.equal(result.commit, old);
    assert.equal(await readFile(join(result.dir, "a.yaml"), "utf8"), "old\n");
    const fetches = (await fx.recorder.calls()).filter((args) => args.includes("fetch"));
    assert.equal(fetches.length, 2, "shallow fetch by SHA refused, then the full fetch");
    assert.ok(fetches[0]?.includes("--depth=1"));
    assert.ok(
      fetches[1]?.includes("--unshallow") === false && fetches[1].includes("+refs/heads/*:refs/driftless/heads/*"),
    );
  });

  void it("polls an unchanged remote with a single ls-remote", async () => {
    const fx = await fixture();
    await fx.source.commit({ "a.yaml": "a\n" });
    await fx.source.push("master");
    const request = {
      syncKey: "s",
      spec: { repo: fx.server.url("remote.git") },
      credentials: { auth: "token", username, token },
    } as const;
    await fx.fetcher.fetch(request);
    await fx.recorder.clear();

    const again = await fx.fetcher.fetch(request);

    assert.equal(again.fetched, false);
    assert.deepEqual(await fx.recorder.subcommands(), ["ls-remote"]);
  });
});

void describe("GitFetcher over HTTP with cookiefile auth", () => {
  const cookieValue = "o=git-bot.example=1//0c9f-SECRET-cookie";
  // A Netscape cookie jar as `git` and git-sync read it: domain, subdomains, path, secure, expiry, name, value.
  const jar = (domain: string): string =>
    `# Netscape HTTP Cookie File\n${domain}\tFALSE\t/\tFALSE\t0\tsession\t${cookieValue}\n`;

  void it("fetches with the Secret's cookie jar, whose cookie appears in no argv, file, log or message", async () => {
    const fx = await fixture({ cookie: `session=${cookieValue}` });
    const sha = await fx.source.commit({ "a.yaml": "a\n" });
    await fx.source.push("master");
    const spec = { repo: fx.server.url("remote.git"), auth: "cookiefile" };
    const credentials = { auth: "cookiefile", cookieFile: jar("127.0.0.1") } as const;

    const remote = await fx.fetcher.resolveRemote({ spec, credentials });
    const result = await fx.fetcher.fetch({ syncKey: "s", spec, credentials });

    assert.equal(remote.commit, sha);
    assert.equal(result.commit, sha);
    assert.equal(await readFile(join(result.dir, "a.yaml"), "utf8"), "a\n");
    assert.ok(fx.server.requests.every((request) => request.authorized));
    await assertSecretNowhere(fx, cookieValue);
  });

  void it("reports a jar for another host as terminal: the server asked for credentials", async () => {
    const fx = await fixture({ cookie: `session=${cookieValue}` });
    await fx.source.commit({ "a.yaml": "a\n" });
    await fx.source.push("master");
    const spec = { repo: fx.server.url("remote.git"), auth: "cookiefile" };
    const credentials = { auth: "cookiefile", cookieFile: jar("git.example.com") } as const;

    const error = await rejection(fx.fetcher.fetch({ syncKey: "s", spec, credentials }));

    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.ok(fx.server.requests.some((request) => !request.authorized));
    await assertSecretNowhere(fx, cookieValue, error);
  });

  void it("refuses a cookie jar for an ssh:// repository, which would never send it", async () => {
    const fx = await fixture({ cookie: `session=${cookieValue}` });
    const spec = { repo: "ssh://git@127.0.0.1:1/remote.git", auth: "cookiefile" };
    const credentials = { auth: "cookiefile", cookieFile: jar("127.0.0.1") } as const;

    const error = await rejection(fx.fetcher.fetch({ syncKey: "s", spec, credentials }));

    assert.equal(error.reason, GitFailureReason.InvalidSpec);
    assert.match(error.message, /spec.git.auth is cookiefile, which needs an http\(s\) spec.git.repo URL/);
  });
});
