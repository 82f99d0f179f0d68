import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { findRepoRoot } from "@driftless/local-cluster";
import { KubeClient, type KubeObject } from "@driftless/kube";
import {
  coreApi,
  createRepoSync,
  customApi,
  eventually,
  startReconciler,
  testEnv,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../support/index.ts";

const root = findRepoRoot();
const cli = join(root, "apps", "cli", "src", "main.ts");

function driftless(...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    // On 'close', not 'exit': 'exit' may come before the pipes are drained.
    child.once("close", (code) => resolve({ code, out }));
  });
}

const kubeconfig = (): string[] => ["--kubeconfig", testEnv().kubeconfig];

interface StatusJson {
  syncs: {
    kind: string;
    namespace: string;
    name: string;
    state: string;
    source: { type: string; display: string; repo?: string; branch?: string; dir?: string };
    commits: { source: string; rendering: string; sync: string; lastSynced: string };
    errorCount: number;
    errors: { phase: string; code: string; message: string }[];
    stalled?: { reason: string; message: string };
    resources?: { group: string; kind: string; namespace: string; name: string; status: string }[];
  }[];
}

/** A RepoSync in a fresh namespace, synced by a real reconciler from `files(namespace)`. */
async function syncedRepo(t: TestContext, files: (namespace: string) => Record<string, JsonObject>) {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  for (const [path, object] of Object.entries(files(namespace))) await repo.write(path, JSON.stringify(object));
  const commit = await repo.commit("objects");
  await createRepoSync(namespace, repo);
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await eventually(async () => reconciler.lastPass?.commit === commit && reconciler.lastPass.synced, {
    what: "synced",
  });
  return { namespace, repo, commit, reconciler };
}

const configMap = (namespace: string, name: string): JsonObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data: { k: name },
});

test("driftless status shows a synced sync's source, commits and managed objects with their kstatus, as text, JSON and YAML, and exits 0", async (t) => {
  const { namespace: ns, commit } = await syncedRepo(t, (ns) => ({ "config/a.yaml": configMap(ns, "a") }));
  const text = await driftless("status", ...kubeconfig(), "--namespace", ns, "--resources");
  assert.equal(text.code, 0, text.out);
  assert.match(text.out, new RegExp(`RepoSync +${ns}/repo-sync +SYNCED +${commit.slice(0, 12)}`));
  assert.match(text.out, /source: +file:\/\/.*@main\/config/);
  assert.match(
    text.out,
    new RegExp(`commits: +source ${commit.slice(0, 12)} +rendering \\S+ +sync ${commit.slice(0, 12)}`),
  );
  assert.match(text.out, new RegExp(`Current +ConfigMap ${ns}/a`));

  const json = await driftless("status", ...kubeconfig(), "-n", ns, "--resources", "-o", "json");
  assert.equal(json.code, 0, json.out);
  const parsed = JSON.parse(json.out) as StatusJson;
  assert.equal(parsed.syncs.length, 1);
  const [sync] = parsed.syncs;
  assert.equal(sync?.kind, "RepoSync");
  assert.equal(sync?.state, "SYNCED");
  assert.equal(sync?.source.type, "git");
  assert.equal(sync?.source.branch, "main");
  assert.equal(sync?.source.dir, "config");
  assert.equal(sync?.commits.source, commit);
  assert.equal(sync?.commits.sync, commit);
  assert.equal(sync?.commits.lastSynced, commit);
  assert.equal(sync?.errorCount, 0);
  assert.deepEqual(
    sync?.resources?.map((r) => [r.kind, r.namespace, r.name, r.status]),
    [["ConfigMap", ns, "a", "Current"]],
  );

  const yaml = await driftless("status", ...kubeconfig(), "-n", ns, "-o", "yaml");
  assert.equal(yaml.code, 0, yaml.out);
  const doc = parseAllDocuments(yaml.out)[0]?.toJS() as StatusJson;
  assert.equal(doc.syncs[0]?.commits.sync, commit);
});

test("driftless status shows a source error with its KNV code, in text and JSON, and exits 1", async (t) => {
  const { namespace: ns, repo, reconciler } = await syncedRepo(t, (ns) => ({ "config/a.yaml": configMap(ns, "a") }));
  await repo.write("config/bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n");
  const bad = await repo.commit("bad");
  await eventually(async () => reconciler.lastPass?.commit === bad && !reconciler.lastPass.synced, {
    what: "the source error reported",
  });
  // The reconciler retries on its poll period, and Syncing is True while it does: wait for a view between passes.
  const settled = async (...args: string[]) => {
    let last = { code: null as number | null, out: "" };
    await eventually(
      async () => {
        last = await driftless("status", ...kubeconfig(), "-n", ns, ...args);
        return /repo-sync +ERROR|"state": "ERROR"/.test(last.out) && last.out.includes("KNV1006");
      },
      { what: "the error on status" },
    );
    return last;
  };
  const text = await settled();
  assert.equal(text.code, 1, text.out);
  assert.match(text.out, new RegExp(`RepoSync +${ns}/repo-sync +ERROR`));
  assert.match(text.out, /error: +KNV1006 \(source\) .*bad\.yaml/);
  assert.match(text.out, new RegExp(`commits: +source ${bad.slice(0, 12)}`));

  const json = await settled("-o", "json");
  assert.equal(json.code, 1, json.out);
  const [sync] = (JSON.parse(json.out) as StatusJson).syncs;
  assert.equal(sync?.state, "ERROR");
  assert.ok((sync?.errorCount ?? 0) >= 1);
  assert.equal(sync?.errors[0]?.code, "KNV1006");
  assert.equal(sync?.errors[0]?.phase, "source");
  assert.equal(sync?.commits.source, bad);
});

test("driftless status --watch prints a change to a sync's status as it happens, masks credentials, and exits on SIGINT", async (t) => {
  const ns = await testNamespace(t);
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace: ns,
    plural: "reposyncs",
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace: ns },
      spec: {
        git: { repo: "https://deploy:s3cr3t-token@git.example/org/repo", branch: "main", dir: "apps", auth: "none" },
      },
    },
  });
  const child = spawn(process.execPath, [cli, "status", ...kubeconfig(), "-n", ns, "--watch"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => void child.kill("SIGKILL"));
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await eventually(async () => new RegExp(`RepoSync +${ns}/repo-sync +PENDING`).test(out), { what: "first view" });
  assert.match(out, /source: +https:\/\/\*\*\*@git\.example\/org\/repo@main\/apps/);

  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => client.close());
  const mapping = {
    group: "configsync.gke.io",
    version: "v1beta1",
    kind: "RepoSync",
    resource: "reposyncs",
    namespaced: true,
    verbs: ["get", "update"],
  } as const;
  const live = (await client.get(mapping, ns, "repo-sync")) as KubeObject;
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  await client.request({
    method: "PUT",
    path: `/apis/configsync.gke.io/v1beta1/namespaces/${ns}/reposyncs/repo-sync/status`,
    body: {
      ...live,
      status: {
        conditions: [
          {
            type: "Stalled",
            status: "True",
            reason: "Deployment",
            message: "the reconciler for https://deploy:s3cr3t-token@git.example/org/repo cannot start",
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    },
  });
  await eventually(async () => new RegExp(`RepoSync +${ns}/repo-sync +STALLED`).test(out), { what: "the change" });
  assert.match(out, /stalled: +Deployment: the reconciler for https:\/\/\*\*\*@git\.example/);
  assert.ok(!out.includes("s3cr3t"), out);
  child.kill("SIGINT");
  assert.equal(await exited, 1, out);
});

test("driftless diff lists the objects a commit would prune: recorded in the ResourceGroup, no longer declared, still ours", async (t) => {
  const {
    namespace: ns,
    repo,
    reconciler,
  } = await syncedRepo(t, (ns) => ({
    "config/a.yaml": configMap(ns, "a"),
    "config/b.yaml": configMap(ns, "b"),
    "config/c.yaml": configMap(ns, "c"),
  }));
  await reconciler.stop(5_000);
  // c is adopted by someone else: no longer carrying our owning-inventory annotation, it is never pruned.
  const c = (await coreApi().readNamespacedConfigMap({ namespace: ns, name: "c" })) as unknown as JsonObject & {
    metadata: { annotations?: Record<string, string> };
  };
  const annotations = { ...c.metadata.annotations };
  delete annotations["config.k8s.io/owning-inventory"];
  await coreApi().replaceNamespacedConfigMap({
    namespace: ns,
    name: "c",
    body: { ...c, metadata: { ...c.metadata, annotations } } as never,
  });
  await repo.remove("config/b.yaml");
  await repo.remove("config/c.yaml");
  const sync = ["--sync-kind", "RepoSync", "--sync-namespace", ns, "--sync-name", "repo-sync"];
  const result = await driftless("diff", join(repo.work, "config"), ...kubeconfig(), ...sync);
  assert.equal(result.code, 1, result.out);
  assert.match(result.out, new RegExp(`^- ConfigMap ${ns}/b: would be pruned$`, "m"));
  assert.doesNotMatch(result.out, new RegExp(`ConfigMap ${ns}/c`));
  assert.doesNotMatch(result.out, new RegExp(`ConfigMap ${ns}/a`));
  assert.match(result.out, /1 object\(s\), 1 would change/);
});

test("driftless version prints the CLI's version and the manager's image tag from the reconciler-manager container of the shipped manifest", async (t) => {
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => client.close());
  const cliVersion = (
    JSON.parse(await readFile(join(root, "apps", "cli", "package.json"), "utf8")) as { version: string }
  ).version;
  const deploymentMapping = {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    resource: "deployments",
    namespaced: true,
    verbs: ["get", "patch", "delete"],
  } as const;
  const text = await readFile(join(root, "manifests", "manager.yaml"), "utf8");
  const deployment = parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject)
    .find((o) => o.kind === "Deployment" && o.metadata.name === "reconciler-manager");
  assert.ok(deployment);
  const image = (
    deployment["spec"] as { template: { spec: { containers: { name: string; image: string }[] } } }
  ).template.spec.containers.find((c) => c.name === "reconciler-manager")?.image;
  assert.ok(image, "the shipped manager container is named reconciler-manager, where nomos version looks");
  const namespaceMapping = {
    group: "",
    version: "v1",
    kind: "Namespace",
    resource: "namespaces",
    namespaced: false,
    verbs: ["patch"],
  } as const;
  await client.patch(
    namespaceMapping,
    undefined,
    "config-management-system",
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "config-management-system" } },
    "apply",
    { fieldManager: "driftless-tests", force: true },
  );
  await client.patch(deploymentMapping, "config-management-system", "reconciler-manager", deployment, "apply", {
    fieldManager: "driftless-tests",
    force: true,
  });
  t.after(() =>
    client.delete(deploymentMapping, "config-management-system", "reconciler-manager").catch(() => undefined),
  );

  const result = await driftless("version", ...kubeconfig());
  assert.equal(result.code, 0, result.out);
  assert.match(result.out, new RegExp(`driftless CLI +${cliVersion.replaceAll(".", "\\.")}`));
  const tag = image.slice(image.lastIndexOf(":") + 1);
  assert.match(result.out, new RegExp(`reconciler-manager +${tag.replaceAll(".", "\\.")} \\(image ${image}\\)`));
});
