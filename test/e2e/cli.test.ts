import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
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
  removeAfter,
} from "../support/index.ts";

const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");

interface Run {
  readonly code: number | null;
  /** stdout and stderr as they came. */
  readonly out: string;
  readonly stdout: string;
  readonly stderr: string;
}

function driftless(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      out += c.toString();
      stderr += c.toString();
    });
    // On 'close', not 'exit': 'exit' may come before the pipes are drained.
    child.once("close", (code) => resolve({ code, out, stdout, stderr }));
  });
}

test("driftless vet reports parse errors with code and file, and passes a clean directory", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "driftless-vet-"));
  removeAfter(t, dir);
  await writeFile(join(dir, "ok.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n");
  assert.equal((await driftless("vet", dir)).code, 0);
  await writeFile(join(dir, "bad.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n");
  const bad = await driftless("vet", dir);
  assert.equal(bad.code, 1);
  assert.match(bad.out, /KNV1006: .*bad\.yaml/);
});

test("driftless vet and hydrate take nomos's flag forms: --flag=true|false, repeated --clusters, --threshold", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "driftless-nomos-flags-"));
  removeAfter(t, dir);
  const configMap = (name: string, cluster?: string): string =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: apps\n` +
    (cluster === undefined ? "" : `  annotations:\n    configsync.gke.io/cluster-name-selector: ${cluster}\n`);
  await writeFile(join(dir, "a.yaml"), configMap("everywhere"));
  await writeFile(join(dir, "b.yaml"), configMap("prod-only", "prod"));
  await writeFile(join(dir, "c.yaml"), configMap("dev-only", "dev"));

  const checked = await driftless("vet", `--path=${dir}`, "--no-api-server-check=true", "--keep-output=false");
  assert.equal(checked.code, 0, checked.out);
  // Each cluster gets two objects: within a limit of 2, over a limit of 1; a bare --threshold is 1,000.
  assert.equal((await driftless("vet", "--path", dir, "--threshold=2")).code, 0);
  assert.equal((await driftless("vet", "--path", dir, "--threshold")).code, 0);
  const over = await driftless("vet", "--path", dir, "--threshold=1");
  assert.equal(over.code, 1, over.out);
  assert.match(
    over.stderr,
    /^KNV1070: for clusters "prod", "dev": the source declares 2 objects, more than the 1 allowed/m,
  );

  const output = join(dir, "out");
  const hydrated = await driftless(
    "hydrate",
    "--path",
    dir,
    "--flat=false",
    "--clusters",
    "prod",
    "--clusters=dev",
    "--output",
    output,
  );
  assert.equal(hydrated.code, 0, hydrated.out);
  assert.deepEqual((await readdir(output)).sort(), ["dev", "prod"]);
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
  // nomos status --name: only the syncs of that name (in this test's namespace: other tests' syncs may be failing).
  const byName = await driftless(
    "status",
    "--kubeconfig",
    testEnv().kubeconfig,
    "-n",
    namespace,
    "--name",
    "repo-sync",
  );
  assert.equal(byName.code, 0, byName.out);
  assert.match(byName.stdout, new RegExp(`RepoSync +${namespace}/repo-sync +SYNCED`));
  const otherName = await driftless("status", "--kubeconfig", testEnv().kubeconfig, "-n", namespace, "--name", "x");
  assert.equal(otherName.code, 0, otherName.out);
  assert.doesNotMatch(otherName.stdout, /repo-sync/);

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

/** A source directory of `files` (path → text), removed after the test. */
async function source(t: { after: (fn: () => Promise<void>) => void }, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-cli-"));
  removeAfter(t, dir);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

// Config Sync's e2e tests drive nomos with these flags (cli_test.go); its scripts must run against driftless.
test("vet and hydrate take nomos's --path, --no-api-server-check and --api-server-timeout, and print errors on stderr only", async (t) => {
  const dir = await source(t, {
    "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: shop\n",
  });
  const vet = await driftless("vet", "--no-api-server-check", "--api-server-timeout", "5s", "--path", dir);
  assert.equal(vet.code, 0, vet.out);
  assert.match(vet.stdout, /1 object\(s\)/);
  const hydrated = await driftless("hydrate", "--no-api-server-check", "--path", dir);
  assert.equal(hydrated.code, 0, hydrated.out);
  assert.match(hydrated.stdout, /^---\napiVersion: v1\nkind: ConfigMap\n/);

  await writeFile(join(dir, "bad.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n");
  // `hydrate > all.yaml` must not write the errors into all.yaml.
  const bad = await driftless("hydrate", "--path", dir);
  assert.equal(bad.code, 1, bad.out);
  assert.equal(bad.stdout, "");
  assert.match(bad.stderr, /KNV1006: .*bad\.yaml/);
  const badVet = await driftless("vet", "--path", dir);
  assert.equal(badVet.code, 1, badVet.out);
  assert.doesNotMatch(badVet.stdout, /KNV1006/);
  assert.match(badVet.stderr, /KNV1006: .*bad\.yaml/);
});

test("vet --namespace NS checks the source as NS's RepoSync, as nomos vet does, and refuses --source-format hierarchy", async (t) => {
  const dir = await source(t, {
    "role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\nrules: []\n",
  });
  assert.equal((await driftless("vet", "--no-api-server-check", "--path", dir)).code, 0);
  const repo = await driftless("vet", "--no-api-server-check", "--namespace", "team", "--path", dir);
  assert.equal(repo.code, 1, repo.out);
  assert.match(repo.stderr, /KNV1058: .*Kind=ClusterRole are Cluster-scoped\. Move reader to the Root repo\./);
  const hierarchy = await driftless("vet", "--namespace", "team", "--source-format", "hierarchy", "--path", dir);
  assert.notEqual(hierarchy.code, 0, hierarchy.out);
  assert.match(hierarchy.stderr, /if --namespace is provided, --source-format must be omitted or set to unstructured/);
});

test("hydrate --flat --output FILE writes one file, --format json writes nomos's List files named .json, and vet --keep-output writes them too", async (t) => {
  const dir = await source(t, {
    "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n",
    "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: shop\ndata:\n  html: <b>&</b>\n",
  });
  const out = await mkdtemp(join(tmpdir(), "driftless-cli-out-"));
  removeAfter(t, out);

  const flat = await driftless(
    "hydrate",
    "--no-api-server-check",
    "--flat",
    "--path",
    dir,
    "--output",
    join(out, "all.yaml"),
  );
  assert.equal(flat.code, 0, flat.out);
  assert.equal((await readFile(join(out, "all.yaml"), "utf8")).match(/^---$/gm)?.length, 2);
  // driftless's own form, --flat FILE, still works.
  const ownFlat = await driftless("hydrate", dir, "--flat", join(out, "own.yaml"));
  assert.equal(ownFlat.code, 0, ownFlat.out);
  assert.equal(await readFile(join(out, "own.yaml"), "utf8"), await readFile(join(out, "all.yaml"), "utf8"));

  // As nomos hydrate --format json writes it (checked against nomos v1.22 by hand): a v1 List, tabs, keys
  // sorted, Go's HTML escapes, no final newline.
  const cmJson =
    '{\n\t"apiVersion": "v1",\n\t"items": [\n\t\t{\n\t\t\t"apiVersion": "v1",\n\t\t\t"data": {\n\t\t\t\t"html": "\\u003cb\\u003e\\u0026\\u003c/b\\u003e"\n\t\t\t},\n' +
    '\t\t\t"kind": "ConfigMap",\n\t\t\t"metadata": {\n\t\t\t\t"name": "cm",\n\t\t\t\t"namespace": "shop"\n\t\t\t}\n\t\t}\n\t],\n\t"kind": "List"\n}';
  const json = await driftless("hydrate", "--format=json", "--path", dir, "--output", join(out, "json"));
  assert.equal(json.code, 0, json.out);
  assert.deepEqual((await readdir(join(out, "json"), { recursive: true })).sort(), [
    "namespace_shop.json",
    "shop",
    "shop/configmap_cm.json",
  ]);
  assert.equal(await readFile(join(out, "json", "shop", "configmap_cm.json"), "utf8"), cmJson);

  const kept = await driftless(
    "vet",
    "--path",
    dir,
    "--keep-output",
    "--format",
    "json",
    "--output",
    join(out, "kept"),
  );
  assert.equal(kept.code, 0, kept.out);
  assert.equal(await readFile(join(out, "kept", "shop", "configmap_cm.json"), "utf8"), cmJson);

  const wrong = await driftless("hydrate", "--format", "xml", "--path", dir);
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.stderr, /format argument must be "yaml" or "json"/);
});
