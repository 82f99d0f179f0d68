/**
 * The CLI as a user meets it on a bad day: Ctrl-C while the API server is down or hangs, a namespace
 * tenant who may read RepoSyncs but not RootSyncs, and `sync --wait` for a user who may patch a sync but
 * not watch it. Against the real API server (and a closed or silent port where the server must be away).
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { findRepoRoot } from "@driftless/local-cluster";
import type { KubeObject } from "@driftless/kube";
import { customApi, eventually, testEnv, testNamespace, removeAfter } from "../../support/index.ts";
import { grantUserRepoSyncs } from "../../support/rbac.ts";
import { silentPort } from "../../support/silent-port.ts";

const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");

interface Run {
  readonly child: ChildProcess;
  /** stdout and stderr so far. */
  readonly out: () => string;
  readonly stdout: () => string;
  readonly exited: Promise<number | null>;
}

function start(t: TestContext, ...args: string[]): Run {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  t.after(() => void child.kill("SIGKILL"));
  let out = "";
  let stdout = "";
  child.stdout?.on("data", (c: Buffer) => ((out += c.toString()), (stdout += c.toString())));
  child.stderr?.on("data", (c: Buffer) => (out += c.toString()));
  // On 'close', not 'exit': 'exit' may come before the pipes are drained, and callers read the output after it.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, out: () => out, stdout: () => stdout, exited };
}

async function driftless(
  t: TestContext,
  ...args: string[]
): Promise<{ code: number | null; out: string; stdout: string }> {
  const run = start(t, ...args);
  const code = await run.exited;
  return { code, out: run.out(), stdout: run.stdout() };
}

/** The exit code, or "still running" when the process has not exited within `ms`. */
async function exitWithin(run: Run, ms: number): Promise<number | null | "still running"> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"still running">((resolve) => (timer = setTimeout(() => resolve("still running"), ms)));
  try {
    return await Promise.race([run.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The ordinary user's kubeconfig, pointed at another server (`https://127.0.0.1:port`). */
async function kubeconfigAt(t: TestContext, port: number): Promise<string> {
  const config = parse(await readFile(testEnv().userKubeconfig, "utf8")) as {
    clusters: { cluster: { server: string } }[];
  };
  for (const c of config.clusters) c.cluster.server = `https://127.0.0.1:${port}`;
  const dir = await mkdtemp(join(tmpdir(), "driftless-kubeconfig-"));
  removeAfter(t, dir);
  const file = join(dir, "config");
  await writeFile(file, stringify(config));
  return file;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const reposyncs = { group: "configsync.gke.io", version: "v1beta1", plural: "reposyncs" } as const;

/** A RepoSync `repo-sync` in `namespace`, with a status saying SYNCED (or `state: "pending"`: no status). */
async function repoSync(namespace: string, state: "synced" | "pending" = "synced"): Promise<void> {
  const created = (await customApi().createNamespacedCustomObject({
    ...reposyncs,
    namespace,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace },
      spec: { sourceFormat: "unstructured", git: { repo: "https://git.example/x.git", branch: "main", auth: "none" } },
    },
  })) as KubeObject;
  if (state === "pending") return;
  const commit = "0123456789abcdef0123456789abcdef01234567";
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  await customApi().replaceNamespacedCustomObjectStatus({
    ...reposyncs,
    namespace,
    name: "repo-sync",
    body: {
      ...created,
      status: {
        lastSyncedCommit: commit,
        source: { commit },
        sync: { commit, lastUpdate: now },
        conditions: [
          { type: "Syncing", status: "False", reason: "Sync", message: "Sync Completed", commit, lastUpdateTime: now },
        ],
      },
    },
  });
}

test("Ctrl-C stops `status --watch` at once, with 130, while the API server is down", async (t) => {
  const kubeconfig = await kubeconfigAt(t, await closedPort());
  const run = start(t, "status", "--watch", "--kubeconfig", kubeconfig);
  // The informers are failing: a connection refused, retried with backoff.
  await eventually(async () => /ECONNREFUSED|refused|connect/i.test(run.out()), { what: "a failed list" });
  run.child.kill("SIGINT");
  assert.equal(await exitWithin(run, 5_000), 130, run.out());
});

test("Ctrl-C stops `status` at once, with 130, while the API server does not answer", async (t) => {
  const silent = await silentPort(t);
  const kubeconfig = await kubeconfigAt(t, silent.port);
  for (const args of [[], ["--watch"]]) {
    const before = silent.connections();
    const run = start(t, "status", ...args, "--kubeconfig", kubeconfig);
    // Connected and waiting for an answer (well within the client's 30 s deadline).
    await eventually(async () => silent.connections() > before, { what: "a request to the silent server" });
    assert.equal(run.child.exitCode, null, `status ${args.join(" ")} exited before Ctrl-C: ${run.out()}`);
    run.child.kill("SIGINT");
    assert.equal(await exitWithin(run, 5_000), 130, `status ${args.join(" ")}: ${run.out()}`);
  }
});

test("`status -n NS` as a user who may read RepoSyncs there but not RootSyncs shows the RepoSync and the refusal", async (t) => {
  const namespace = await testNamespace(t, "tenant");
  await repoSync(namespace);
  await grantUserRepoSyncs(namespace, ["get", "list", "watch"]);
  const user = ["--kubeconfig", testEnv().userKubeconfig, "-n", namespace];

  const text = await driftless(t, "status", ...user);
  assert.match(text.stdout, new RegExp(`RepoSync +${namespace}/repo-sync +SYNCED +0123456789ab`), text.out);
  assert.match(text.out, /cannot read RootSyncs: .*forbidden/i, text.out);
  // What the user may read is synced: the refusal of another kind is reported, not a failure.
  assert.equal(text.code, 0, text.out);

  const json = await driftless(t, "status", ...user, "-o", "json");
  assert.equal(json.code, 0, json.out);
  const parsed = JSON.parse(json.stdout) as { syncs: { kind: string; name: string; state: string }[] };
  assert.deepEqual(
    parsed.syncs.map((s) => [s.kind, s.name, s.state]),
    [["RepoSync", "repo-sync", "SYNCED"]],
  );

  // --watch: the same view, drawn though one kind is refused; Ctrl-C then ends it with the view's code.
  const watch = start(t, "status", ...user, "--watch");
  await eventually(async () => new RegExp(`RepoSync +${namespace}/repo-sync +SYNCED`).test(watch.stdout()), {
    what: "the watch's first view",
  });
  watch.child.kill("SIGINT");
  assert.equal(await exitWithin(watch, 5_000), 0, watch.out());

  // A namespace where the user may read nothing: every kind refused, nothing to show, exit 1.
  const other = await testNamespace(t, "other");
  const none = await driftless(t, "status", "--kubeconfig", testEnv().userKubeconfig, "-n", other);
  assert.equal(none.code, 1, none.out);
  assert.match(none.out, /cannot read RootSyncs: .*forbidden/i);
  assert.match(none.out, /cannot read RepoSyncs: .*forbidden/i);
  assert.doesNotMatch(none.stdout, /KIND/);
});

test("`sync --wait` as a user who may patch a sync but not watch it says the API server refused, not a timeout", async (t) => {
  const namespace = await testNamespace(t, "nowatch");
  await repoSync(namespace, "pending");
  await grantUserRepoSyncs(namespace, ["get", "patch"]);
  const started = Date.now();
  const run = await driftless(
    t,
    "sync",
    "reposync",
    "repo-sync",
    "-n",
    namespace,
    "--wait",
    "--timeout",
    "60s",
    "--kubeconfig",
    testEnv().userKubeconfig,
  );
  assert.match(run.out, /pass requested/, run.out);
  assert.doesNotMatch(run.out, /within the timeout/, run.out);
  assert.match(run.out, /refused.*forbidden/i, run.out);
  assert.equal(run.code, 1, run.out);
  // Well before the timeout; a CLI start alone took 3 s at a load of 11, and this run 17 s once at 14.
  assert.ok(Date.now() - started < 45_000, `took ${Date.now() - started} ms`);
});

test("Ctrl-C during `sync --wait` is reported as an interruption, with 130, not as a timeout", async (t) => {
  const namespace = await testNamespace(t, "interrupt");
  await repoSync(namespace, "pending");
  // No reconciler: nobody answers the request.
  const run = start(
    t,
    "sync",
    "reposync",
    "repo-sync",
    "-n",
    namespace,
    "--wait",
    "--timeout",
    "60s",
    "--kubeconfig",
    testEnv().kubeconfig,
  );
  await eventually(async () => run.out().includes("pass requested"), { what: "the request" });
  run.child.kill("SIGINT");
  assert.equal(await exitWithin(run, 5_000), 130, run.out());
  assert.match(run.out(), /interrupted/);
  assert.doesNotMatch(run.out(), /within the timeout/);
});

test("`status --timeout 1s` gives up on an API server that does not answer after that long, as nomos status's --timeout", async (t) => {
  const silent = await silentPort(t);
  const kubeconfig = await kubeconfigAt(t, silent.port);
  const run = start(t, "status", "--timeout", "1s", "--kubeconfig", kubeconfig);
  // The client's own deadline is 30 s: an exit before it is the flag's. The bound counts the CLI's start too:
  // this run took 7.2 s on a loaded CI machine.
  assert.equal(await exitWithin(run, 25_000), 1, run.out());
  assert.match(run.out(), /no response within 1000 ms/, run.out());
});

test("`status` where the API server serves neither sync kind (no CRDs) says so per kind, as nomos status does, and exits 1", async (t) => {
  // The real API server under a path where it serves nothing: every list is its 404, as without the CRDs.
  const config = parse(await readFile(testEnv().kubeconfig, "utf8")) as { clusters: { cluster: { server: string } }[] };
  for (const c of config.clusters) c.cluster.server = `${c.cluster.server.replace(/\/$/, "")}/no-apis-here`;
  const dir = await mkdtemp(join(tmpdir(), "driftless-kubeconfig-"));
  removeAfter(t, dir);
  await writeFile(join(dir, "config"), stringify(config));
  for (const args of [[], ["--watch"]]) {
    const run = start(t, "status", ...args, "--kubeconfig", join(dir, "config"));
    // Exits rather than watching on; each run, the CLI's start included, took 7.5 s on a loaded CI machine.
    assert.equal(await exitWithin(run, 30_000), 1, run.out());
    for (const kind of ["RootSync", "RepoSync"])
      assert.match(
        run.out(),
        new RegExp(`cannot read ${kind}s: no matches for kind "${kind}" in version "configsync.gke.io/v1beta1"`),
      );
  }
});
