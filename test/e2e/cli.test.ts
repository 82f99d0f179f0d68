import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findRepoRoot } from "@driftless/local-cluster";
import {
  coreApi,
  createRepoSync,
  eventually,
  startReconciler,
  testEnv,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../support/index.ts";

const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");

function driftless(...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.once("exit", (code) => resolve({ code, out }));
  });
}

test("driftless vet reports parse errors with code and file, and passes a clean directory", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "driftless-vet-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "ok.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n");
  assert.equal((await driftless("vet", dir)).code, 0);
  await writeFile(join(dir, "bad.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n");
  const bad = await driftless("vet", dir);
  assert.equal(bad.code, 1);
  assert.match(bad.out, /KNV1006: .*bad\.yaml/);
});

test("driftless diff shows what a reconciler would write, nothing once synced, and a drift; status lists the sync", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace }, data: { color: "blue" } };
  await repo.write("config/a.yaml", JSON.stringify(cm));
  const commit = await repo.commit("a");
  const dir = join(repo.work, "config");
  const sync = [
    "--kubeconfig",
    testEnv().kubeconfig,
    "--sync-kind",
    "RepoSync",
    "--sync-namespace",
    namespace,
    "--sync-name",
    "repo-sync",
  ];

  const before = await driftless("diff", dir, ...sync);
  assert.equal(before.code, 1, before.out);
  assert.match(before.out, /\+ v1 ConfigMap .*\/a: would be created/);

  await createRepoSync(namespace, repo);
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await eventually(async () => reconciler.lastPass?.commit === commit && reconciler.lastPass.synced, {
    what: "synced",
  });

  const synced = await driftless("diff", dir, ...sync);
  assert.equal(synced.code, 0, synced.out);
  assert.match(synced.out, /1 object\(s\), 0 would change/);

  const statusOut = await driftless("status", "--kubeconfig", testEnv().kubeconfig);
  assert.match(statusOut.out, new RegExp(`RepoSync +${namespace}/repo-sync +SYNCED +${commit.slice(0, 12)}`));

  // Edit by hand and stop the reconciler first, so the diff sees the drift before it is reverted.
  await reconciler.stop(5_000);
  const live = (await coreApi().readNamespacedConfigMap({ namespace, name: "a" })) as unknown as JsonObject;
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "a",
    body: { ...live, data: { color: "red" } } as never,
  });
  const drifted = await driftless("diff", dir, ...sync);
  assert.equal(drifted.code, 1, drifted.out);
  assert.match(drifted.out, /data\.color/);
  assert.match(drifted.out, /red/);
  assert.match(drifted.out, /blue/);
});

test("each verb's --help prints that verb's usage and exits 0; a verb used wrongly exits 2 with its own usage", async () => {
  for (const [verb, line] of [
    ["sync", /driftless sync rootsync\|reposync NAME .*--wait/],
    ["suspend", /driftless suspend\|resume rootsync\|reposync NAME/],
    ["resume", /driftless suspend\|resume rootsync\|reposync NAME/],
    ["console", /driftless console .*--no-open/],
  ] as const) {
    const help = await driftless(verb, "--help");
    assert.equal(help.code, 0, help.out);
    assert.match(help.out, line);
    assert.doesNotMatch(help.out, /driftless (vet|hydrate|diff|status|version) /, `${verb} --help shows only ${verb}`);
  }
  const wrong = await driftless("suspend", "deployment/x");
  assert.equal(wrong.code, 2, wrong.out);
  assert.match(wrong.out, /"deployment" is not rootsync or reposync/);
  assert.match(wrong.out, /driftless suspend\|resume rootsync\|reposync NAME/);
  assert.doesNotMatch(wrong.out, /driftless vet /);
});
