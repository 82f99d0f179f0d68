/**
 * The Git side failing under a running reconciler: the server going away in the middle of a fetch, and
 * the branch replaced by an unrelated history, deleted and recreated. While the source cannot be read
 * status says KNV2004 and nothing is applied or deleted; once it can, the sync resumes by itself.
 */
import { execFile } from "node:child_process";
import { basename, dirname } from "node:path";
import { promisify } from "node:util";
import { test } from "node:test";
import assert from "node:assert/strict";
import { startGitHttpServer } from "@driftless/git/testing";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const run = promisify(execFile);

const configMap = (namespace: string, name: string): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { name } });

async function configMapNames(namespace: string): Promise<string[]> {
  const { items } = await coreApi().listNamespacedConfigMap({ namespace });
  return items
    .map((cm) => cm.metadata?.name ?? "")
    .filter((n) => n !== "kube-root-ca.crt")
    .sort();
}

/** status.source.errors once they are not empty. */
function sourceErrors(name: string): Promise<JsonObject[]> {
  return eventually(
    async () => {
      const errors = (((await rootSyncStatus(name))["source"] as JsonObject | undefined)?.["errors"] ??
        []) as JsonObject[];
      return errors.length > 0 ? errors : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report a source error` },
  );
}

test("the Git server going away mid-fetch: KNV2004, nothing applied or deleted meanwhile, and the commit syncs once the server is back", async (t) => {
  const namespace = await testNamespace(t, "gitdown");
  const name = `gitdown-${suffix()}`;
  const repo = await TestRepo.create(t);
  // Protocol v0: listing refs is a GET, fetching the pack a POST, so the stall below can pick the fetch.
  const options = { projectRoot: dirname(repo.remote), protocolV2: false };
  let server = await startGitHttpServer(options);
  t.after(() => server.close());
  const url = server.url(basename(repo.remote));
  await repo.write("config/a.yaml", configMap(namespace, "a"));
  await repo.write("config/b.yaml", configMap(namespace, "b"));
  const first = await repo.commit("a and b");
  await createRootSync(name, repo, {
    spec: { git: { repo: url, branch: repo.branch, dir: "config", auth: "none" } },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  // The next pack fetch hangs (the new commit is listed); the server then dies under it.
  server.stall((r) => r.method === "POST" && r.path.endsWith("/git-upload-pack"));
  const stalledFrom = server.requests.length;
  await repo.remove("config/b.yaml");
  await repo.write("config/c.yaml", configMap(namespace, "c"));
  const second = await repo.commit("b out, c in");
  await eventually(() => server.requests.slice(stalledFrom).some((r) => r.status === 0), {
    what: "a fetch waiting on the server",
  });
  await server.close();

  const [error] = await sourceErrors(name);
  assert.equal(error?.["code"], "2004", JSON.stringify(error));
  assert.deepEqual(await configMapNames(namespace), ["a", "b"], "the unreadable commit was acted on");
  const status = await rootSyncStatus(name);
  assert.equal(status["lastSyncedCommit"], first);

  server = await startGitHttpServer({ ...options, port: server.port });
  await rootSynced(name, second);
  assert.deepEqual(await configMapNames(namespace), ["a", "c"]);
  assert.deepEqual(((await rootSyncStatus(name))["source"] as JsonObject)["errors"] ?? [], []);
});

test("the branch force-pushed to an unrelated history, then deleted and recreated: each history is synced in turn, and nothing is deleted while the branch is missing", async (t) => {
  const namespace = await testNamespace(t, "unrelated");
  const name = `unrelated-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap(namespace, "a"));
  await repo.write("config/b.yaml", configMap(namespace, "b"));
  const first = await repo.commit("a and b");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  // A history sharing no commit with the first.
  await repo.git("checkout", "-q", "--orphan", "unrelated");
  await repo.git("rm", "-q", "-r", "--cached", ".");
  await repo.remove("config");
  await repo.write("config/c.yaml", configMap(namespace, "c"));
  await repo.git("add", "-A");
  await repo.git("commit", "-q", "-m", "unrelated: c only");
  await repo.git("push", "-q", "--force", "origin", `unrelated:${repo.branch}`);
  const unrelated = await repo.git("rev-parse", "HEAD");
  await rootSynced(name, unrelated);
  assert.deepEqual(await configMapNames(namespace), ["c"]);

  // The branch deleted: a bare repository's HEAD branch goes once HEAD points elsewhere.
  await run("git", ["--git-dir", repo.remote, "symbolic-ref", "HEAD", "refs/heads/elsewhere"]);
  await run("git", ["--git-dir", repo.remote, "branch", "-D", repo.branch]);
  const [error] = await sourceErrors(name);
  assert.equal(error?.["code"], "2004", JSON.stringify(error));
  assert.deepEqual(await configMapNames(namespace), ["c"], "objects were deleted while the branch was missing");

  // Recreated, with another change on top.
  await repo.write("config/d.yaml", configMap(namespace, "d"));
  await repo.git("add", "-A");
  await repo.git("commit", "-q", "-m", "d too");
  await repo.git("push", "-q", "origin", `unrelated:${repo.branch}`);
  const recreated = await repo.git("rev-parse", "HEAD");
  await rootSynced(name, recreated);
  assert.deepEqual(await configMapNames(namespace), ["c", "d"]);
  assert.deepEqual(((await rootSyncStatus(name))["source"] as JsonObject)["errors"] ?? [], []);
});
