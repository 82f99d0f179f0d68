/**
 * `driftless sync | suspend | resume` against a running manager (process mode) whose reconciler polls
 * its repository only once an hour: `sync --wait` must get the new commit synced at once, because the
 * manager forwards the request and the reconciler answers it; the other verbs flip the suspension.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { findRepoRoot } from "@driftless/local-cluster";
import {
  createRepoSync,
  customApi,
  eventually,
  startReconciler,
  testEnv,
  testNamespace,
  TestRepo,
  removeAfter,
} from "../support/index.ts";
import { grantRepoSyncReconciler, grantUserRepoSyncs } from "../support/rbac.ts";
import {
  admin,
  configMap,
  createNamespace,
  createSync,
  getSync,
  Mapping,
  repoSyncObject,
  startManager,
  synced,
} from "../integration/manager/helpers.ts";

const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");

function driftless(...args: string[]): Promise<{ code: number | null; out: string }> {
  return driftlessWith(testEnv().kubeconfig, ...args);
}

function driftlessWith(kubeconfig: string, ...args: string[]): Promise<{ code: number | null; out: string }> {
  return run([...args, "--kubeconfig", kubeconfig], process.env);
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"], env });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    // On 'close', not 'exit': 'exit' may come before the pipes are drained.
    child.once("close", (code) => resolve({ code, out }));
  });
}

test("driftless sync --wait gets a new commit synced at once on a sync that polls hourly, and exits 1 when that pass fails; suspend and resume set and remove the annotation", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t);
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  const first = await repo.commit("v1");
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch, period: "1h" }),
  );
  await synced("RepoSync", namespace, "repo-sync", first);

  // A commit the hourly poll would not see for an hour.
  await repo.write("cm.yaml", configMap("a", undefined, { v: "2" }));
  const second = await repo.commit("v2");
  const started = Date.now();
  const ok = await driftless("sync", "reposync", "repo-sync", "-n", namespace, "--wait", "--timeout", "60s");
  assert.equal(ok.code, 0, ok.out);
  assert.match(ok.out, new RegExp(`SYNCED at commit ${second}`));
  assert.ok(Date.now() - started < 60_000);
  const sync = await getSync("RepoSync", namespace, "repo-sync");
  const annotations = sync?.metadata.annotations ?? {};
  assert.equal(annotations["driftless.dev/sync-request-handled"], annotations["driftless.dev/sync-requested-at"]);

  // A commit that does not parse: the answering pass fails, and so does the command.
  await repo.write("bad.yaml", "kind: [unclosed\n");
  await repo.commit("broken");
  const failed = await driftless("sync", "reposync/repo-sync", "-n", namespace, "--wait", "--timeout", "60s");
  assert.equal(failed.code, 1, failed.out);
  assert.match(failed.out, /ERROR/);
  assert.match(failed.out, /KNV1006/);

  const suspend = await driftless("suspend", "reposync", "repo-sync", "-n", namespace);
  assert.equal(suspend.code, 0, suspend.out);
  await eventually(
    async () =>
      (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations?.["driftless.dev/suspend"] === "true",
  );
  const resume = await driftless("resume", "reposync/repo-sync", "-n", namespace);
  assert.equal(resume.code, 0, resume.out);
  assert.equal(
    (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations?.["driftless.dev/suspend"],
    undefined,
  );
  // A sync that is not there: the API server's 404, said plainly.
  const missing = await driftless("suspend", "reposync", "nothing-here", "-n", namespace);
  assert.equal(missing.code, 1);
  assert.match(missing.out, /not found/);
});

test("driftless sync --wait on a sync the manager stalled (an invalid spec) exits 1 with the stall instead of waiting out its timeout", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t);
  const repo = await TestRepo.create(t);
  const sync = repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch });
  // auth ssh without spec.git.secretRef: KNV1061, and no reconciler is set up to answer a request.
  const spec = sync["spec"] as { git: Record<string, unknown> };
  await createSync(t, { ...sync, spec: { ...spec, git: { ...spec.git, auth: "ssh" } } });

  const stalled = await driftless("sync", "reposync", "repo-sync", "-n", namespace, "--wait", "--timeout", "60s");
  assert.equal(stalled.code, 1, stalled.out);
  assert.match(stalled.out, /STALLED \(Validation\): .*secretRef/);
  assert.doesNotMatch(stalled.out, /within the timeout/);
});

test("driftless sync --wait on a suspended sync exits 1 at once, saying nothing is applied, instead of reporting its empty pass as synced", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/cm.yaml", configMap("a", namespace, { v: "1" }));
  const first = await repo.commit("v1");
  await createRepoSync(namespace, repo);
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await eventually(async () => reconciler.lastPass?.commit === first && reconciler.lastPass.synced, {
    what: "v1 synced",
  });
  const suspend = await driftless("suspend", "reposync", "repo-sync", "-n", namespace);
  assert.equal(suspend.code, 0, suspend.out);

  await repo.write("config/cm.yaml", configMap("a", namespace, { v: "2" }));
  await repo.commit("v2");
  const waited = await driftless("sync", "reposync", "repo-sync", "-n", namespace, "--wait", "--timeout", "60s");
  assert.equal(waited.code, 1, waited.out);
  assert.match(waited.out, /suspended: its pass applies, prunes and corrects nothing until `driftless resume`/);
  assert.doesNotMatch(waited.out, /SUSPENDED at commit|within the timeout/);
  // Without --wait the request is all the command promises: it stands, with the same warning.
  const asked = await driftless("sync", "reposync", "repo-sync", "-n", namespace);
  assert.equal(asked.code, 0, asked.out);
  assert.match(asked.out, /suspended: its pass applies/);
});

test("driftless sync --wait is answered only by the echo of its own request, not by a handled value dated later", async (t) => {
  const namespace = await testNamespace(t);
  await createRepoSync(namespace, await TestRepo.create(t)); // no reconciler: nothing answers
  // A faster clock, or anyone who may patch the sync, can leave a handled value later than any request.
  const client = await admin();
  t.after(() => client.close());
  const handled = { metadata: { annotations: { "driftless.dev/sync-request-handled": "2099-01-01T00:00:00Z" } } };
  await client.patch(Mapping.RepoSync, namespace, "repo-sync", handled, "merge");
  const waited = await driftless("sync", "reposync", "repo-sync", "-n", namespace, "--wait", "--timeout", "3s");
  assert.equal(waited.code, 1, waited.out);
  assert.match(waited.out, /within the timeout/);
});

test("driftless sync --wait on a sync deleted while it waits exits 1 at once, saying so, instead of waiting out its timeout", async (t) => {
  const namespace = await testNamespace(t);
  await createRepoSync(namespace, await TestRepo.create(t)); // no reconciler: nothing answers
  const waiting = driftless("sync", "reposync", "repo-sync", "-n", namespace, "--wait", "--timeout", "120s");
  await eventually(
    async () =>
      (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations?.["driftless.dev/sync-requested-at"] !==
      undefined,
    { what: "the pass request on the RepoSync" },
  );
  await customApi().deleteNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    name: "repo-sync",
  });
  const deleted = await waiting;
  assert.equal(deleted.code, 1, deleted.out);
  assert.match(deleted.out, new RegExp(`RepoSync ${namespace}/repo-sync: deleted before a pass answered`));
  assert.doesNotMatch(deleted.out, /within the timeout/);
});

test("driftless suspend and resume without -n act on the RepoSync in the kubeconfig context's namespace, as kubectl would", async (t) => {
  const namespace = await testNamespace(t);
  await createRepoSync(namespace, await TestRepo.create(t));
  // The admin's kubeconfig, its current context naming the namespace.
  const config = parse(await readFile(testEnv().kubeconfig, "utf8")) as {
    "current-context": string;
    contexts: { name: string; context: Record<string, string> }[];
  };
  for (const c of config.contexts) if (c.name === config["current-context"]) c.context["namespace"] = namespace;
  const dir = await mkdtemp(join(tmpdir(), "levers-kubeconfig-"));
  removeAfter(t, dir);
  const kubeconfig = join(dir, "config");
  await writeFile(kubeconfig, stringify(config), { mode: 0o600 });

  const suspended = await driftlessWith(kubeconfig, "suspend", "reposync", "repo-sync");
  assert.equal(suspended.code, 0, suspended.out);
  assert.match(suspended.out, new RegExp(`RepoSync ${namespace}/repo-sync suspended`));
  assert.equal(
    (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations?.["driftless.dev/suspend"],
    "true",
  );
  const resumed = await driftlessWith(kubeconfig, "resume", "reposync/repo-sync");
  assert.equal(resumed.code, 0, resumed.out);
  assert.equal(
    (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations?.["driftless.dev/suspend"],
    undefined,
  );
});

test("driftless suspend and resume read -n=NS, -nNS and --namespace=NS as kubectl does, not '=NS' as the namespace", async (t) => {
  const namespace = await testNamespace(t);
  await createRepoSync(namespace, await TestRepo.create(t));
  const suspendAnnotation = async () =>
    (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations?.["driftless.dev/suspend"];
  for (const [verb, flag] of [
    ["suspend", `-n=${namespace}`],
    ["resume", `-n${namespace}`],
    ["suspend", `--namespace=${namespace}`],
  ] as const) {
    const done = await driftless(verb, "reposync/repo-sync", flag);
    assert.equal(done.code, 0, `${verb} ${flag}: ${done.out}`);
    assert.match(done.out, new RegExp(`RepoSync ${namespace}/repo-sync (suspended|resumed)`));
    assert.equal(await suspendAnnotation(), verb === "suspend" ? "true" : undefined, `${verb} ${flag}`);
  }
});

test("driftless reads the first file of a KUBECONFIG list that exists, as kubectl does", async (t) => {
  const namespace = await testNamespace(t);
  await createRepoSync(namespace, await TestRepo.create(t));
  const missing = join(tmpdir(), "no-such-kubeconfig");
  const env = { ...process.env, KUBECONFIG: `${missing}:${testEnv().kubeconfig}` };
  const suspended = await run(["suspend", "reposync", "repo-sync", "-n", namespace], env);
  assert.equal(suspended.code, 0, suspended.out);
  assert.equal(
    (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations?.["driftless.dev/suspend"],
    "true",
  );
});

test("driftless suspend, resume and sync as a user who may read a sync but not patch it exit 1 with the API server's refusal, and change nothing", async (t) => {
  const namespace = await testNamespace(t);
  await createRepoSync(namespace, await TestRepo.create(t));
  await grantUserRepoSyncs(namespace, ["get", "list", "watch"]);
  const before = (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations;
  for (const verb of ["suspend", "resume", "sync"]) {
    const refused = await driftlessWith(testEnv().userKubeconfig, verb, "reposync", "repo-sync", "-n", namespace);
    assert.equal(refused.code, 1, refused.out);
    assert.match(refused.out, /the API server refused: .*cannot patch resource "reposyncs"/);
  }
  assert.deepEqual((await getSync("RepoSync", namespace, "repo-sync"))?.metadata.annotations, before);
});
