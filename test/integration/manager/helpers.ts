/**
 * The manager under test: a real `driftless-manager` process, running with a token of the
 * `reconciler-manager` ServiceAccount from manifests/ (so its RBAC is what is tested), against
 * the run's control plane, Redis and real git repositories. Each test's manager serves only the
 * syncs labelled for it and has its own queue prefix and Lease, so test files run in parallel.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { parseAllDocuments } from "yaml";
import { KubeClient, RestMapper, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { findRepoRoot } from "@driftless/local-cluster";
import { eventually, removeQuietly, suffix, testEnv, testFailed, TestRepo } from "../../support/index.ts";

export const systemNamespace = "config-management-system";
export const managerLabel = "driftless.test/manager";
const repoRoot = findRepoRoot();
const managerMain = join(repoRoot, "apps", "manager", "src", "main.ts");

let adminClient: Promise<KubeClient> | undefined;
let adminMapper: RestMapper | undefined;

/** A client with the admin identity, for setting up and inspecting (never for the manager itself). */
export function admin(): Promise<KubeClient> {
  adminClient ??= KubeClient.fromKubeconfig(testEnv().kubeconfig);
  return adminClient;
}

export async function mappingOf(apiVersion: string, kind: string): Promise<ResourceMapping> {
  const client = await admin();
  adminMapper ??= new RestMapper(client);
  const mapping = await adminMapper.mappingFor(apiVersion, kind);
  if (mapping === undefined) throw new Error(`no mapping for ${apiVersion} ${kind}`);
  return mapping;
}

/**
 * Server-side applies every document of a manifests/ file as the admin (idempotent; test files share them),
 * but those of `skipKinds` (a Deployment no kubelet here would run, say).
 */
export async function applyManifest(
  file: string,
  { skipKinds = [] }: { readonly skipKinds?: readonly string[] } = {},
): Promise<KubeObject[]> {
  const client = await admin();
  const text = await readFile(join(repoRoot, "manifests", file), "utf8");
  const applied: KubeObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    const obj = doc.toJS() as KubeObject | null;
    if (obj === null || skipKinds.includes(obj.kind)) continue;
    const m = await mappingOf(obj.apiVersion, obj.kind);
    applied.push(
      await client.patch(m, m.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name, obj, "apply", {
        fieldManager: "driftless-tests",
        force: true,
      }),
    );
  }
  return applied;
}

let managerKubeconfigFile: Promise<string> | undefined;

/**
 * A kubeconfig holding a token of manifests/'s `reconciler-manager` ServiceAccount (TokenRequest
 * API), with the control plane's server and CA: the manager runs with exactly that RBAC, and process
 * mode's addition (manager-process-rbac.yaml: tokens for its reconciler children).
 */
export function managerKubeconfig(): Promise<string> {
  managerKubeconfigFile ??= (async () => {
    for (const file of ["namespace.yaml", "manager-rbac.yaml", "manager-process-rbac.yaml", "reconciler-rbac.yaml"])
      await applyManifest(file);
    return serviceAccountKubeconfig("reconciler-manager");
  })();
  return managerKubeconfigFile;
}

/** Directories holding ServiceAccount tokens, removed when the test file's process exits. */
const tokenDirs: string[] = [];
process.once("exit", () => {
  for (const dir of tokenDirs) rmSync(dir, { recursive: true, force: true });
});

/** A kubeconfig file with a fresh token of `<namespace>/<serviceAccount>` and the control plane's server and CA. */
export async function serviceAccountKubeconfig(serviceAccount: string, namespace = systemNamespace): Promise<string> {
  const token = await mintToken(namespace, serviceAccount);
  const env = testEnv();
  const dir = await mkdtemp(join(tmpdir(), "driftless-sa-"));
  tokenDirs.push(dir);
  const path = join(dir, "kubeconfig");
  const ca = (await readFile(env.caFile)).toString("base64");
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "local", cluster: { server: env.server, "certificate-authority-data": ca } }],
    users: [{ name: serviceAccount, user: { token } }],
    contexts: [{ name: serviceAccount, context: { cluster: "local", user: serviceAccount } }],
    "current-context": serviceAccount,
  };
  await writeFile(path, JSON.stringify(config), { mode: 0o600 });
  return path;
}

/** A client acting as a ServiceAccount of config-management-system (a reconciler's, as its token would). */
export async function clientAs(serviceAccount: string): Promise<KubeClient> {
  return KubeClient.fromKubeconfig(await serviceAccountKubeconfig(serviceAccount));
}

export async function mintToken(namespace: string, serviceAccount: string): Promise<string> {
  const client = await admin();
  const response = await client.request<{ status: { token: string } }>({
    method: "POST",
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 7200 } },
  });
  return response.status.token;
}

export interface ManagerOptions {
  readonly mode?: "process" | "deployment";
  /** Shares the scope (selector, queue prefix, lease) with another manager: replicas, or a restart. */
  readonly scope?: ManagerScope;
  readonly webhookSecret?: string;
  readonly extraArgs?: readonly string[];
  /** A Redis of the test's own, given as in a pod: REDIS_URL and REDIS_PASSWORD, no flag. Default: the run's. */
  readonly redis?: { readonly url: string; readonly password?: string | undefined };
}

export interface ManagerScope {
  readonly id: string;
  readonly queuePrefix: string;
  readonly leaseName: string;
  readonly stateDir: string;
  /** Labels a sync needs to be served by this manager. */
  readonly labels: Readonly<Record<string, string>>;
}

export async function newScope(t: TestContext): Promise<ManagerScope> {
  const id = `m${suffix()}${suffix()}`;
  const stateDir = await mkdtemp(join(tmpdir(), `driftless-manager-${id}-`));
  // After-hooks run in registration order, so this one runs before a manager of the scope deletes the
  // scope's syncs and stops: the folder then stays, since its reconcilers still read their tokens here to
  // finish those deletions (removed, a deletion failed on ENOENT and hung), and the manager's hook removes
  // it once stopped. It must not throw, or the hooks after it, the manager's stop among them, would not run.
  t.after(async () => {
    // The reconcilers' logs (process mode), kept for the manager's hook to show if the test failed.
    keptReconcilerLogs.set(stateDir, await reconcilerLogs(stateDir));
    if (!scopesWithManager.has(stateDir))
      await rm(stateDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  });
  return { id, queuePrefix: `t${id}`, leaseName: `driftless-manager-${id}`, stateDir, labels: { [managerLabel]: id } };
}

export interface RunningManager {
  readonly scope: ManagerScope;
  readonly process: ChildProcess;
  readonly pid: number;
  readonly metricsPort: number;
  readonly webhookPort: number | undefined;
  readonly logs: string[];
  /** Resolves with the exit code (or signal) once the process has exited and its output is read to the end. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, and waits for the exit. */
  stop(): Promise<number | string>;
  metrics(): Promise<string>;
  isLeader(): boolean;
}

/** Starts `driftless-manager` (process mode unless told) and stops it when the test ends. */
export async function startManager(t: TestContext, options: ManagerOptions = {}): Promise<RunningManager> {
  const scope = options.scope ?? (await newScope(t));
  scopesWithManager.add(scope.stateDir);
  const kubeconfig = await managerKubeconfig();
  const env = testEnv();
  const args = [
    managerMain,
    "--kubeconfig",
    kubeconfig,
    "--reconciler-mode",
    options.mode ?? "process",
    "--metrics-port",
    "0",
    "--queue-prefix",
    scope.queuePrefix,
    "--sync-selector",
    Object.entries(scope.labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(","),
    "--lease-name",
    scope.leaseName,
    "--state-dir",
    scope.stateDir,
    "--allow-file-repos",
    "--log-level",
    "debug",
    "--reconciler-image",
    "driftless:test",
    ...(options.extraArgs ?? []),
  ];
  if (options.webhookSecret !== undefined) {
    const secretFile = join(scope.stateDir, `webhook-secret-${suffix()}`);
    await writeFile(secretFile, options.webhookSecret, { mode: 0o600 });
    args.push("--webhook-port", "0", "--webhook-secret-file", secretFile);
  }
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      KUBECONFIG: "",
      // The admin password as in a pod: in the environment, never a flag.
      ...(options.redis === undefined
        ? { REDIS_URL: env.redisAddress, REDIS_PASSWORD: env.redisPassword }
        : { REDIS_URL: options.redis.url, REDIS_PASSWORD: options.redis.password ?? "" }),
    },
  });
  const logs: string[] = [];
  let leader = false;
  let started: ((line: Record<string, unknown>) => void) | undefined;
  const ready = new Promise<Record<string, unknown>>((resolve) => (started = resolve));
  let buffer = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      logs.push(line);
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry["msg"] === "manager started") started?.(entry);
        if (entry["msg"] === "became the leader") leader = true;
        if (entry["msg"] === "lost the leader lease") leader = false;
      } catch {
        // not JSON: kept as is
      }
    }
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => logs.push(`stderr: ${chunk}`));
  // On 'close', not 'exit': 'exit' may come before the pipes are drained, and tests read `logs` once it has exited.
  const exited = new Promise<number | string>((resolve) =>
    child.once("close", (code, signal) => resolve(code ?? signal ?? "?")),
  );
  const stop = async (): Promise<number | string> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    return exited;
  };
  let startedUp = false;
  // Registered before the first await, so a manager that never says it started is stopped too (its pipes would
  // keep the test file running); and nothing in it throws before the manager is stopped and its folder removed.
  t.after(async () => {
    // While the manager still runs, so deletion goes the normal way (finalizers and all).
    let cleanupFailure: unknown;
    if (startedUp && child.exitCode === null && child.signalCode === null)
      await cleanUpScope(scope).catch((error: unknown) => (cleanupFailure = error));
    // A manager stuck in its shutdown is killed rather than waited for without end.
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    await stop();
    clearTimeout(killer);
    // The logs again, now with the deletions the cleanup asked for.
    keptReconcilerLogs.set(scope.stateDir, await reconcilerLogs(scope.stateDir));
    scopesWithManager.delete(scope.stateDir);
    await removeQuietly(scope.stateDir);
    // A deletion the manager did not finish is its failure: its log says why.
    if (process.env["DRIFTLESS_TEST_LOGS"] === "1" || testFailed(t) || cleanupFailure !== undefined) {
      process.stderr.write(`--- manager ${scope.id} (${child.pid ?? 0}) ---\n${logs.join("\n")}\n`);
      for (const [file, text] of keptReconcilerLogs.get(scope.stateDir) ?? [])
        process.stderr.write(`--- ${file} ---\n${text}\n`);
    }
    keptReconcilerLogs.delete(scope.stateDir);
    // The test fails on it once the hooks after this one (other managers, connections) have run.
    if (cleanupFailure !== undefined)
      t.after(() => {
        throw cleanupFailure;
      });
  });
  const line = await Promise.race([
    ready,
    exited.then((code) => {
      throw new Error(`driftless-manager exited (${code}) before starting:\n${logs.join("\n")}`);
    }),
  ]);
  startedUp = true;
  const manager: RunningManager = {
    scope,
    process: child,
    pid: child.pid ?? 0,
    metricsPort: Number(line["metricsPort"]),
    webhookPort: typeof line["webhookPort"] === "number" ? line["webhookPort"] : undefined,
    logs,
    exited,
    stop,
    metrics: async () => (await fetch(`http://127.0.0.1:${manager.metricsPort}/metrics`)).text(),
    isLeader: () => leader,
  };
  return manager;
}

/** Reconciler logs by state folder, read before the folder is removed. */
const keptReconcilerLogs = new Map<string, Array<[string, string]>>();
/** State folders a manager was started on: that manager's after-hook removes them, once its syncs are gone. */
const scopesWithManager = new Set<string>();

/**
 * The logs of the reconcilers a process-mode manager ran under `stateDir` (`<reconciler>/reconciler.log`), by
 * path. Only the top level is listed: a reconciler's folder also holds its checkouts.
 */
async function reconcilerLogs(stateDir: string): Promise<Array<[string, string]>> {
  const logs: Array<[string, string]> = [];
  for (const entry of (await readdir(stateDir).catch(() => [])).sort()) {
    const file = join(entry, "reconciler.log");
    const text = await readFile(join(stateDir, file), "utf8").catch(() => undefined);
    if (text !== undefined) logs.push([file, text]);
  }
  return logs;
}

/**
 * Deletes every sync of a scope and waits for them to go; what is still there after the wait
 * (its manager is gone) loses its finalizers, so no test leaves a sync stuck behind.
 */
export async function cleanUpScope(scope: ManagerScope): Promise<void> {
  const client = await admin();
  const labelSelector = Object.entries(scope.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const list = async (): Promise<KubeObject[]> => [
    ...(await client.list(Mapping.RootSync, { labelSelector })).items,
    ...(await client.list(Mapping.RepoSync, { labelSelector })).items,
  ];
  for (const sync of await list()) {
    await client
      .delete(
        sync.kind === "RootSync" ? Mapping.RootSync : Mapping.RepoSync,
        sync.metadata.namespace,
        sync.metadata.name,
      )
      .catch(() => undefined);
  }
  try {
    // Each deletion waits for its reconciler's finalizer (a pass) and the manager's teardown: a loaded CI machine
    // took over 30 s for one pass.
    await eventually(async () => (await list()).length === 0, { timeoutMs: 60_000, what: "the scope's syncs deleted" });
  } catch (error) {
    const stuck = await list();
    for (const sync of stuck) {
      const m = sync.kind === "RootSync" ? Mapping.RootSync : Mapping.RepoSync;
      await client
        .patch(m, sync.metadata.namespace, sync.metadata.name, { metadata: { finalizers: null } }, "merge")
        .catch(() => undefined);
    }
    // A deletion that needs this rescue is a failure of the manager, not of the cleanup.
    throw new Error(
      `syncs still there 60 s after deletion: ${stuck.map((s) => `${s.kind}/${s.metadata.namespace}/${s.metadata.name} ${JSON.stringify(s.metadata.finalizers)}`).join(", ")}`,
      { cause: error },
    );
  }
}

/** The pids of reconciler processes started for a scope (their command line carries its queue prefix). */
export async function reconcilerPids(scope: ManagerScope, syncName?: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue;
    }
    const args = cmdline.split("\0");
    if (!args.some((a) => a.endsWith(join("reconciler", "src", "main.ts")))) continue;
    const at = args.indexOf("--queue-prefix");
    if (at < 0 || args[at + 1] !== scope.queuePrefix) continue;
    if (syncName !== undefined && args[args.indexOf("--sync-name") + 1] !== syncName) continue;
    // A zombie or exiting process is not a running reconciler.
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    if (/^\d+ \(.*\) [ZX]/.test(stat)) continue;
    pids.push(Number(entry));
  }
  return pids;
}

/** The log file of a process-mode reconciler, for failure messages. */
export async function reconcilerLog(scope: ManagerScope, reconcilerName: string): Promise<string> {
  return readFile(join(scope.stateDir, reconcilerName, "reconciler.log"), "utf8").catch(() => "(no log)");
}

export function configMap(
  name: string,
  namespace: string | undefined,
  data: Record<string, string>,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, ...(namespace === undefined ? {} : { namespace }), ...extra },
    data,
  });
}

export interface SyncSpec {
  readonly repo: string;
  readonly branch: string;
  readonly dir?: string;
  readonly period?: string;
}

export function repoSyncObject(
  namespace: string,
  name: string,
  scope: ManagerScope,
  git: SyncSpec,
  annotations: Record<string, string> = {},
): KubeObject {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name, namespace, labels: { ...scope.labels }, annotations },
    spec: { sourceFormat: "unstructured", git: { auth: "none", period: "2s", ...git } },
  };
}

export function rootSyncObject(
  name: string,
  scope: ManagerScope,
  git: SyncSpec,
  annotations: Record<string, string> = {},
  override?: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name, namespace: systemNamespace, labels: { ...scope.labels }, annotations },
    spec: {
      sourceFormat: "unstructured",
      git: { auth: "none", period: "2s", ...git },
      ...(override === undefined ? {} : { override }),
    },
  };
}

/** One entry of a sync's status.source.errors. */
export interface SourceError {
  readonly code?: string;
  readonly errorMessage?: string;
}

export const Mapping = {
  RootSync: {
    group: "configsync.gke.io",
    version: "v1beta1",
    kind: "RootSync",
    resource: "rootsyncs",
    namespaced: true,
    verbs: [],
  },
  RepoSync: {
    group: "configsync.gke.io",
    version: "v1beta1",
    kind: "RepoSync",
    resource: "reposyncs",
    namespaced: true,
    verbs: [],
  },
  ConfigMap: { group: "", version: "v1", kind: "ConfigMap", resource: "configmaps", namespaced: true, verbs: [] },
  Secret: { group: "", version: "v1", kind: "Secret", resource: "secrets", namespaced: true, verbs: [] },
  Namespace: { group: "", version: "v1", kind: "Namespace", resource: "namespaces", namespaced: false, verbs: [] },
  CustomResourceDefinition: {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    resource: "customresourcedefinitions",
    namespaced: false,
    verbs: [],
  },
  ServiceAccount: {
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    resource: "serviceaccounts",
    namespaced: true,
    verbs: [],
  },
  Deployment: {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    resource: "deployments",
    namespaced: true,
    verbs: [],
  },
  Role: {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "Role",
    resource: "roles",
    namespaced: true,
    verbs: [],
  },
  RoleBinding: {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "RoleBinding",
    resource: "rolebindings",
    namespaced: true,
    verbs: [],
  },
  ClusterRoleBinding: {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRoleBinding",
    resource: "clusterrolebindings",
    namespaced: false,
    verbs: [],
  },
  ValidatingWebhookConfiguration: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    resource: "validatingwebhookconfigurations",
    namespaced: false,
    verbs: [],
  },
} as const satisfies Record<string, ResourceMapping>;

/** Config Sync's name for its admission webhook, which the manager's keeps (the API server names it in refusals). */
export const admissionWebhookName = "admission-webhook.configsync.gke.io";

/** Creates a sync as the admin; deletes it (and waits for it to go) when the test ends, unless it is gone. */
export async function createSync(t: TestContext, obj: KubeObject): Promise<void> {
  const client = await admin();
  const m = obj.kind === "RootSync" ? Mapping.RootSync : Mapping.RepoSync;
  await client.create(m, obj);
  t.after(async () => {
    await client.delete(m, obj.metadata.namespace, obj.metadata.name).catch(() => undefined);
  });
}

export async function getSync(
  kind: "RootSync" | "RepoSync",
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> {
  return (await admin()).get(kind === "RootSync" ? Mapping.RootSync : Mapping.RepoSync, namespace, name);
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  commit?: string;
}

export function conditionOf(sync: KubeObject | undefined, type: string): Condition | undefined {
  const conditions = ((sync?.["status"] as { conditions?: Condition[] } | undefined)?.conditions ?? []) as Condition[];
  return conditions.find((c) => c.type === type);
}

/** Resolves once the sync reports `commit` synced without errors. */
export function synced(
  kind: "RootSync" | "RepoSync",
  namespace: string,
  name: string,
  commit: string,
  timeoutMs = 60_000,
): Promise<KubeObject> {
  return eventually(
    async () => {
      const sync = await getSync(kind, namespace, name);
      const status = (sync?.["status"] ?? {}) as Record<string, unknown>;
      const syncing = conditionOf(sync, "Syncing");
      return status["lastSyncedCommit"] === commit && syncing?.status === "False" && syncing.commit === commit
        ? sync
        : undefined;
    },
    { timeoutMs, what: `${kind} ${namespace}/${name} synced at ${commit.slice(0, 7)}` },
  );
}

export async function getObject(
  m: ResourceMapping,
  namespace: string | undefined,
  name: string,
): Promise<KubeObject | undefined> {
  return (await admin()).get(m, namespace, name);
}

/** A namespace of the test's own, labelled so nothing else touches it; deleted (without waiting) at the end. */
export async function createNamespace(t: TestContext, prefix = "mgr"): Promise<string> {
  const client = await admin();
  const name = `${prefix}-${suffix()}`;
  await client.create(Mapping.Namespace, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "driftless.test/run": "true" } },
  });
  t.after(async () => {
    await client.delete(Mapping.Namespace, undefined, name).catch(() => undefined);
  });
  return name;
}

/**
 * A RootSync of `manager`'s scope syncing one ConfigMap (`<object>.yaml`) into a namespace of the test's own,
 * polling every 2 s; resolves once its first commit is synced.
 */
export async function syncedRootSync(
  t: TestContext,
  manager: RunningManager,
  options: { readonly namespacePrefix: string; readonly object: string },
): Promise<{ name: string; repo: TestRepo; target: string }> {
  const target = await createNamespace(t, options.namespacePrefix);
  const repo = await TestRepo.create(t);
  await repo.write(`${options.object}.yaml`, configMap(options.object, target, { round: "0" }));
  const commit = await repo.commit("one object");
  const name = `root-${suffix()}`;
  await createSync(t, rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch, period: "2s" }));
  await synced("RootSync", systemNamespace, name, commit, 90_000);
  return { name, repo, target };
}
