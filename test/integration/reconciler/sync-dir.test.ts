import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  TestRepo,
  updateRootSyncSpec,
  type JsonObject,
} from "../../support/index.ts";

const json = (obj: unknown): string => JSON.stringify(obj);
const namespace = (name: string): string => json({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
const repoObject = json({
  apiVersion: "configmanagement.gke.io/v1",
  kind: "Repo",
  metadata: { name: "repo" },
  spec: { version: "1.0.0" },
});

/** The codes of `status.source.errors` once they are reported. */
function sourceErrorCodes(name: string): Promise<string[]> {
  return eventually(
    async () => {
      const source = (await rootSyncStatus(name))["source"] as JsonObject | undefined;
      const errors = (source?.["errors"] ?? []) as JsonObject[];
      return errors.length > 0 ? errors.map((e) => String(e["code"])) : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report source errors` },
  );
}

async function exists(name: string): Promise<boolean> {
  try {
    await coreApi().readNamespace({ name });
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

const withDir = (dir: string) => (spec: JsonObject) => ({ ...spec, git: { ...(spec["git"] as JsonObject), dir } });

test("a spec.git.dir the repository lacks is KNV2004 on status.source, and the sync recovers once the dir is fixed", async (t) => {
  const id = suffix();
  const name = `dir-${id}`;
  const ns = `dir-ns-${id}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", namespace(ns));
  const commit = await repo.commit("a namespace");
  await createRootSync(name, repo, {
    spec: { git: { repo: repo.url, branch: repo.branch, dir: "some-nonexistent-policydir", auth: "none" } },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  assert.deepEqual(await sourceErrorCodes(name), ["2004"]);
  assert.equal(await exists(ns), false);

  await updateRootSyncSpec(name, withDir("config"));
  await rootSynced(name, commit);
  assert.equal(await exists(ns), true);
});

test("an unset spec.git.dir reads a hierarchy at the repository's root, reported as dir '.'; a root without system/repo.yaml is KNV1017", async (t) => {
  const id = suffix();
  const name = `rootdir-${id}`;
  const ns = `rootdir-ns-${id}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write(`namespaces/${ns}/namespace.yaml`, namespace(ns));
  const withoutRepo = await repo.commit("a hierarchy without its Repo");
  await createRootSync(name, repo, {
    spec: { sourceFormat: "hierarchy", git: { repo: repo.url, branch: repo.branch, dir: "", auth: "none" } },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  assert.deepEqual(await sourceErrorCodes(name), ["1017"]);
  assert.equal(await exists(ns), false);

  await repo.write("system/repo.yaml", repoObject);
  const complete = await repo.commit("the Repo");
  const status = await rootSynced(name, complete);
  assert.notEqual(complete, withoutRepo);
  assert.equal(await exists(ns), true);
  const gitStatus = (status["sync"] as JsonObject | undefined)?.["gitStatus"] as JsonObject | undefined;
  assert.equal(gitStatus?.["dir"], ".");
});
