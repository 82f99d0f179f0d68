import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { GitFetcher } from "./fetcher.ts";
import { git, SourceRepo, tempDir } from "./testing/git-fixture.ts";

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
