import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { GitFetcher } from "./fetcher.ts";
import { relativeToScpLike } from "./submodules.ts";
import { git, SourceRepo, tempDir } from "./testing/git-fixture.ts";
import { startGitHttpServer } from "./testing/git-http-server.ts";

/** Submodules over file://: gitlinks made with plumbing, .gitmodules written by hand, as a repository holds them. */

let root: { path: string; remove: () => Promise<void> };
let counter = 0;

before(async () => {
  root = await tempDir("submodules");
});
after(async () => {
  await root.remove();
});

async function repo(name: string, files: Record<string, string>): Promise<{ source: SourceRepo; sha: string }> {
  counter += 1;
  const source = await SourceRepo.create(join(root.path, `${name}-${String(counter)}`));
  const sha = await source.commit(files);
  await source.push("master");
  return { source, sha };
}

/** Adds a gitlink at `path` to `sha` with its .gitmodules entry, commits and pushes. */
async function addGitlink(parent: SourceRepo, path: string, url: string, sha: string): Promise<string> {
  await parent.commit({ ".gitmodules": `[submodule "${path}"]\n\tpath = ${path}\n\turl = ${url}\n` });
  await git(parent.work, "update-index", "--add", "--cacheinfo", `160000,${sha},${path}`);
  await git(parent.work, "commit", "--quiet", "-m", `submodule ${path}`);
  await parent.push("master");
  return git(parent.work, "rev-parse", "HEAD");
}

function fetcher(allowFileTransport = true): GitFetcher {
  counter += 1;
  return new GitFetcher({ cacheDir: join(root.path, `cache-${String(counter)}`), allowFileTransport });
}

void describe("submodules", () => {
  void it("checks out nested submodules, with URLs relative to their superproject", async () => {
    const inner = await repo("inner", { "deep.yaml": "kind: ConfigMap\nmetadata: {name: deep}\n" });
    const middle = await repo("middle", { "mid.yaml": "kind: ConfigMap\nmetadata: {name: mid}\n" });
    const middleSha = await addGitlink(middle.source, "inner", inner.source.fileUrl, inner.sha);
    const top = await repo("top", { "config/top.yaml": "kind: ConfigMap\n" });
    // ../<dir>/remote.git relative to the superproject's URL, as `git submodule add ../x` writes it.
    const relative = `../../${middle.source.bare.split("/").slice(-2).join("/")}`;
    const commit = await addGitlink(top.source, "config/middle", relative, middleSha);

    const result = await fetcher().fetch({ syncKey: "sub", spec: { repo: top.source.fileUrl } });
    assert.equal(result.commit, commit);
    assert.match(await readFile(join(result.dir, "config/middle/mid.yaml"), "utf8"), /mid/);
    assert.match(await readFile(join(result.dir, "config/middle/inner/deep.yaml"), "utf8"), /deep/);
  });

  void it("keeps a ref only for the submodule commits of the commit checked out: older ones go, so gc can prune them", async () => {
    const lib = await repo("lib", { "a.yaml": "kind: ConfigMap\n" });
    const top = await repo("top", { "top.yaml": "kind: ConfigMap\n" });
    const refsIn = async (gitDir: string): Promise<string[]> =>
      (await git(gitDir, "for-each-ref", "--format=%(refname)", "refs/driftless/submodules/"))
        .split("\n")
        .filter((line) => line !== "");
    const syncs = fetcher();
    const fetchTop = async (): Promise<string[]> => {
      const result = await syncs.fetch({ syncKey: "sub", spec: { repo: top.source.fileUrl } });
      return refsIn(join(result.dir, "..", "..", "repo.git"));
    };
    await addGitlink(top.source, "lib", lib.source.fileUrl, lib.sha);
    const first = await fetchTop();
    assert.equal(first.length, 1);
    for (let i = 0; i < 3; i++) {
      const next = await lib.source.commit({ "a.yaml": `kind: ConfigMap # ${String(i)}\n` });
      await lib.source.push("master");
      await addGitlink(top.source, "lib", lib.source.fileUrl, next);
    }
    const later = await fetchTop();
    assert.equal(later.length, 1, "one ref: the submodule commit the checkout holds");
    assert.notDeepEqual(later, first);
    await git(top.source.work, "rm", "--quiet", "--cached", "lib");
    await git(top.source.work, "rm", "--quiet", ".gitmodules");
    await git(top.source.work, "commit", "--quiet", "-m", "no submodule");
    await top.source.push("master");
    assert.deepEqual(await fetchTop(), [], "a commit without submodules keeps none");
  });

  void it("refuses a submodule on a transport the fetcher does not allow, as an invalid spec", async () => {
    const inner = await repo("refused", { "a.yaml": "kind: ConfigMap\n" });
    const top = await repo("top-refused", { "b.yaml": "kind: ConfigMap\n" });
    await addGitlink(top.source, "lib", "ext::sh -c touch% /tmp/pwned", inner.sha);
    await assert.rejects(
      fetcher().fetch({ syncKey: "refused", spec: { repo: top.source.fileUrl } }),
      (error: unknown) =>
        error instanceof GitFetchError &&
        error.reason === GitFailureReason.InvalidSpec &&
        /submodule lib: url .* not allowed/.test(error.message),
    );
  });

  void it("fetches a submodule of a repository served over http only over http(s), never file://, ssh or ext::, even where the fetcher allows file://", async (t) => {
    const server = await startGitHttpServer({ projectRoot: root.path });
    t.after(() => server.close());
    const overHttp = (source: SourceRepo): string => server.url(relative(root.path, source.bare));
    // A repository on the reconciler's own disk (another sync's cache, say) that a tenant's .gitmodules names.
    const local = await repo("local-secret", { "secret.yaml": "kind: Secret\n" });
    const shared = await repo("shared", { "shared.yaml": "kind: ConfigMap\nmetadata: {name: shared}\n" });
    const refusals: [url: string, transport: string][] = [
      [local.source.fileUrl, "the file"],
      [local.source.bare, "the file"],
      ["ssh://git@127.0.0.1:1/x.git", "the ssh"],
      ["ext::sh -c touch% /tmp/pwned", "a"],
    ];
    for (const [index, [url, transport]] of refusals.entries()) {
      const top = await repo(`top-http-${String(index)}`, { "b.yaml": "kind: ConfigMap\n" });
      await addGitlink(top.source, "lib", url, local.sha);
      await assert.rejects(
        fetcher(true).fetch({ syncKey: `http-${String(index)}`, spec: { repo: overHttp(top.source) } }),
        (error: unknown) => {
          assert.ok(error instanceof GitFetchError, String(error));
          assert.equal(error.reason, GitFailureReason.InvalidSpec, `${url}: ${error.message}`);
          assert.ok(error.message.includes(`submodule lib: url`), error.message);
          assert.ok(error.message.includes(`uses ${transport} transport`), error.message);
          assert.ok(error.message.includes("of a http repository may use http or https only"), error.message);
          return true;
        },
      );
    }
    // The same repository over http, relative to the superproject as `git submodule add ../x` writes it, is fetched.
    const top = await repo("top-http-ok", { "b.yaml": "kind: ConfigMap\n" });
    const relativeUrl = `../../${shared.source.bare.split("/").slice(-2).join("/")}`;
    const commit = await addGitlink(top.source, "lib", relativeUrl, shared.sha);
    const result = await fetcher(true).fetch({ syncKey: "http-ok", spec: { repo: overHttp(top.source) } });
    assert.equal(result.commit, commit);
    assert.match(await readFile(join(result.dir, "lib/shared.yaml"), "utf8"), /shared/);
  });

  void it("reports a gitlink to a commit its repository does not have", async () => {
    const inner = await repo("missing", { "a.yaml": "kind: ConfigMap\n" });
    const top = await repo("top-missing", { "b.yaml": "kind: ConfigMap\n" });
    await addGitlink(top.source, "lib", inner.source.fileUrl, "0123456789abcdef0123456789abcdef01234567");
    await assert.rejects(
      fetcher().fetch({ syncKey: "missing", spec: { repo: top.source.fileUrl } }),
      (error: unknown) => error instanceof GitFetchError && /submodule lib .* 0123456789abcdef/.test(error.message),
    );
  });
});

void describe("relativeToScpLike", () => {
  void it("resolves a relative submodule url against a user@host:path repository as git does", () => {
    assert.equal(relativeToScpLike("git@host:org/repo.git", "../lib.git"), "git@host:org/lib.git");
    assert.equal(relativeToScpLike("git@host:org/repo.git/", "./../lib.git"), "git@host:org/lib.git");
    assert.equal(relativeToScpLike("git@host:/srv/git/super.git", "../lib.git"), "git@host:/srv/git/lib.git");
    // Above the path: down to the host's colon, then no further.
    assert.equal(relativeToScpLike("git@host:repo.git", "../lib.git"), "git@host:lib.git");
    assert.throws(() => relativeToScpLike("git@host:repo.git", "../../lib.git"));
  });

  // A nested submodule's url comes from a repository's .gitmodules: slashes are trimmed in one pass
  // (withoutTrailingSlashes), not by a regex quadratic in a run of them (300,000 slashes: 78 s).
  void it("keeps a run of slashes inside a parent url as it is", () => {
    const parent = `git@host:org/${"/".repeat(3_000)}repo.git//`;
    assert.equal(relativeToScpLike(parent, "./lib.git"), `${parent.slice(0, -2)}/lib.git`);
  });
});
