/**
 * The install path users follow, on a real node: `kubectl apply -k manifests/` on a control plane of
 * this file's own with a kubelet (containerd + runc), the images `npm run image:build` makes imported
 * into it, nothing pulled. Redis and the manager (two replicas, one leader) run as pods with the
 * shipped probes, resources and security context; a RepoSync and a RootSync get reconciler
 * Deployments whose pods fetch from a git http-backend on the node bridge's address and write status
 * with their own ServiceAccount tokens. Then the failures a cluster sees: a reconciler pod deleted, a
 * namespace deleted under a Foreground RepoSync, the leader manager pod deleted.
 *
 * One deviation from the manifests as shipped: the node has no cluster DNS, so the manager's
 * REDIS_URL names the Redis Service by the environment the kubelet injects (REDIS_SERVICE_HOST/PORT)
 * instead of `redis.config-management-system.svc` (an overlay patches that one value).
 */
import { after, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { performance } from "node:perf_hooks";
import { parseAllDocuments } from "yaml";
import { AppsV1Api, CoordinationV1Api, NetworkingV1Api, type V1Pod } from "@kubernetes/client-node";
import { KubeClient, RestMapper, type KubeObject } from "@driftless/kube";
import { SyncAnnotation, nsReconcilerName, rootReconcilerName, SyncLabel } from "@driftless/api";
import { startGitHttpServer, type GitHttpServer } from "@driftless/git/testing";
import {
  down,
  ensureNodeBinaries,
  findRepoRoot,
  importImage,
  listContainers,
  listNodeChains,
  nodeNetwork,
} from "@driftless/local-cluster";
import { selects as selectsLabels } from "../support/label-selector.ts";
import { writeNodeOverlay } from "../support/node-overlay.ts";
import { grantRepoSyncReconciler } from "../support/rbac.ts";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  type JsonObject,
  kubeConfig,
  repoSyncStatus,
  rootSynced,
  rootSyncNamespace,
  statusCode,
  suffix,
  testEnv,
  TestRepo,
  removeQuietly,
} from "../support/index.ts";
import { usePrivateControlPlane } from "../support/private-control-plane.ts";

const run = promisify(execFile);
const root = findRepoRoot();
const version = (JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string }).version;
const system = rootSyncNamespace;
// What is installed: the repository's manifests/, or another copy of them (an older commit's, say).
const manifests = process.env["DRIFTLESS_E2E_MANIFESTS"] ?? join(root, "manifests");
const timings: Record<string, number> = {};

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await fn();
  } finally {
    timings[what] = Math.round(performance.now() - start);
  }
}

/** Why this machine cannot run a node (then, and only then, the suite skips). */
async function nodeUnavailable(): Promise<string | false> {
  if (process.getuid?.() !== 0) return "needs root: the node (kubelet, containerd, CNI bridge, iptables) runs as root";
  for (const tool of ["containerd", "runc", "iptables", "buildah"]) {
    try {
      await run("sh", ["-c", `command -v ${tool}`]);
    } catch {
      return `${tool} is not installed (bash scripts/node/setup.sh installs the node's Debian packages)`;
    }
  }
  try {
    await ensureNodeBinaries({ quiet: true });
  } catch (error) {
    return `the node's binaries cannot be built here: ${(error as Error).message}`;
  }
  return false;
}

const skip = await nodeUnavailable();
if (skip !== false) console.log(`# install-path e2e skipped: ${skip}`);

// The images first (the tarballs CI keeps; a warm build with nothing changed takes seconds), then the node.
const archives =
  skip === false
    ? await timed("image:build", async () => {
        const { stdout } = await run("bash", ["scripts/image/build.sh", "--no-import"], {
          cwd: root,
          maxBuffer: 64 * 1024 * 1024,
        });
        assert.match(stdout, /driftless-[\d.]+\.tar/);
        return [
          join(root, ".local", "image", `driftless-${version}.tar`),
          join(root, ".local", "image", "redis-7.0-bookworm.tar"),
        ];
      })
    : [];
const { stateDir } =
  skip === false
    ? await timed("cluster up with node", () => usePrivateControlPlane({ withNode: true }))
    : { stateDir: "" };
if (skip === false) {
  await timed("image import", async () => {
    for (const archive of archives) await importImage(archive);
  });
}

// Fixtures that outlive one test: the repo (and its server) and a work folder.
const work = skip === false ? await mkdtemp(join(tmpdir(), "driftless-install-path-")) : "";
after(() => removeQuietly(work));
// TestRepo registers its clean-up with the context it is given: here the file's own `after`.
const repo = skip === false ? await TestRepo.create({ after } as unknown as TestContext) : (undefined as never);
// Smart HTTP on the bridge's address, where pods reach the host.
const server: GitHttpServer =
  skip === false
    ? await startGitHttpServer({ projectRoot: dirname(repo.remote), host: nodeNetwork.bridgeAddress })
    : (undefined as never);
if (skip === false) after(() => server.close());
let installed = false;
let repoNamespace = "";
let managerPodsBefore: string[] = [];

after(() => {
  const lines = Object.entries(timings).map(([what, ms]) => `${what}: ${(ms / 1000).toFixed(1)} s`);
  console.log(`# install-path timings\n${lines.map((l) => `#   ${l}`).join("\n")}`);
});

function ready(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
}

async function readyPods(namespace: string, selector: string): Promise<V1Pod[]> {
  const pods = await coreApi().listNamespacedPod({ namespace, labelSelector: selector });
  return pods.items.filter((p) => p.metadata?.deletionTimestamp === undefined && ready(p));
}

/** Pods' state for a failure message: phase, conditions and the containers' waiting/terminated reasons. */
async function describePods(namespace: string, selector: string): Promise<string> {
  const pods = await coreApi().listNamespacedPod({ namespace, labelSelector: selector });
  return JSON.stringify(
    pods.items.map((p) => ({
      name: p.metadata?.name,
      phase: p.status?.phase,
      conditions: p.status?.conditions?.map((c) => `${c.type}=${c.status}${c.message ? `: ${c.message}` : ""}`),
      containers: p.status?.containerStatuses?.map((c) => ({ restarts: c.restartCount, state: c.state })),
    })),
  );
}

async function waitReady(namespace: string, selector: string, count: number, what: string): Promise<V1Pod[]> {
  try {
    return await eventually(
      async () => {
        const pods = await readyPods(namespace, selector);
        return pods.length === count ? pods : undefined;
      },
      { timeoutMs: 180_000, what },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\npods: ${await describePods(namespace, selector)}`);
  }
}

async function leaseHolder(): Promise<string | undefined> {
  try {
    const lease = await kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({
      name: "driftless-manager",
      namespace: system,
    });
    return lease.spec?.holderIdentity ?? undefined;
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

function repoSynced(namespace: string, commit: string, timeoutMs = 120_000): Promise<JsonObject> {
  return eventually(
    async () => {
      const status = await repoSyncStatus(namespace);
      return status["lastSyncedCommit"] === commit ? status : undefined;
    },
    { timeoutMs, what: `RepoSync in ${namespace} synced to ${commit.slice(0, 7)}` },
  );
}

/** Each sync reads a folder of its own in the one repository (a folder per namespace, as a repo of several teams). */
async function createRepoSyncFromBridge(
  namespace: string,
  dir: string,
  annotations: Record<string, string> = {},
): Promise<void> {
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace, annotations },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: server.url("remote.git"), branch: repo.branch, dir, auth: "none", period: "5s" },
      },
    },
  });
}

async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${suffix()}`;
  await coreApi().createNamespace({ body: { metadata: { name } } });
  return name;
}

function configMap(namespace: string, name: string, data: Record<string, string>): string {
  return JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });
}

// The user's commands through kubectl when the machine has one; else the same objects through the API
// (kustomize's output from the project's pinned kustomize, server-side applied).
// DRIFTLESS_E2E_KUBECTL=none takes the second way on a machine with kubectl too.
const hasKubectl =
  process.env["DRIFTLESS_E2E_KUBECTL"] !== "none" &&
  (await run("sh", ["-c", "command -v kubectl"]).then(
    () => true,
    () => false,
  ));

function kubectl(...args: string[]): Promise<string> {
  return run("kubectl", ["--kubeconfig", testEnv().kubeconfig, ...args]).then((r) => r.stdout);
}

/** `kubectl apply -k DIR` or `kubectl apply -f FILE`. */
async function apply(flag: "-k" | "-f", path: string): Promise<string> {
  if (hasKubectl) return kubectl("apply", flag, path);
  let yaml: string;
  if (flag === "-f") {
    yaml = await readFile(path, "utf8");
  } else {
    const bin = join(root, ".local", "bin");
    const tools = (await readdir(bin)).find((n) => n.startsWith("render-kustomize-")) ?? "";
    yaml = (await run(join(bin, tools, "kustomize"), ["build", path], { maxBuffer: 64 * 1024 * 1024 })).stdout;
  }
  // The project's raw client: client-node's typed serializer drops fields it has no model for
  // (a CRD's x-kubernetes-preserve-unknown-fields), which the API server then refuses.
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  try {
    const mapper = new RestMapper(client);
    const applied: string[] = [];
    for (const doc of parseAllDocuments(yaml)) {
      const object = doc.toJS() as KubeObject;
      const mapping = await mapper.mappingFor(object.apiVersion, object.kind);
      assert.ok(mapping !== undefined, `no resource for ${object.apiVersion} ${object.kind}`);
      const namespace = mapping.namespaced ? object.metadata.namespace : undefined;
      await client.patch(mapping, namespace, object.metadata.name, object, "apply", {
        fieldManager: "kubectl",
        force: true,
      });
      applied.push(`${object.kind}/${object.metadata.name}`);
    }
    return applied.join("\n");
  } finally {
    client.close();
  }
}

/** The commands manager.yaml's header tells users to run before `kubectl apply -k`, as a shell script. */
async function preApplySteps(): Promise<string> {
  const header = (await readFile(join(manifests, "manager.yaml"), "utf8")).split("\n# and configure")[0] ?? "";
  const commands = header
    .split("\n")
    .filter((line) => line.startsWith("#   "))
    .map((line) => line.slice(4))
    .join("\n");
  assert.match(commands, /kubectl .*create secret generic driftless-redis/s, "manager.yaml's header names the steps");
  return commands;
}

/** `kubectl -n config-management-system create secret generic NAME --from-literal=KEY=VALUE`. */
async function createSecret(name: string, key: string, value: string): Promise<void> {
  if (hasKubectl) {
    await kubectl("-n", system, "create", "secret", "generic", name, `--from-literal=${key}=${value}`);
    return;
  }
  await coreApi().createNamespacedSecret({
    namespace: system,
    body: { metadata: { name }, stringData: { [key]: value } },
  });
}

test(
  "kubectl apply -k manifests/ brings up Redis and the manager (two replicas, one leader) as Ready pods",
  { skip },
  async () => {
    // The steps manager.yaml gives before applying (the namespace, then its two Secrets), run as written
    // with kubectl; without kubectl, the same through the API.
    if (hasKubectl) {
      await run("sh", ["-e", "-c", await preApplySteps()], {
        cwd: dirname(manifests),
        env: { ...process.env, KUBECONFIG: testEnv().kubeconfig },
      });
    } else {
      await apply("-f", join(manifests, "namespace.yaml"));
      await createSecret("driftless-redis", "password", `redis-${suffix()}${suffix()}`);
      await createSecret("driftless-webhook", "secret", `webhook-${suffix()}${suffix()}`);
    }
    const overlay = await writeNodeOverlay(join(work, "overlay"), manifests);
    await timed("apply -k", () => apply("-k", overlay));

    await timed("redis Ready", () => waitReady(system, "app.kubernetes.io/name=redis", 1, "the Redis pod to be Ready"));
    const managers = await timed("manager pods Ready", () =>
      waitReady(system, "app.kubernetes.io/name=reconciler-manager", 2, "both manager pods to be Ready"),
    );
    managerPodsBefore = managers.map((p) => p.metadata?.name ?? "");
    const holder = await eventually(leaseHolder, { timeoutMs: 60_000, what: "a manager to hold the Lease" });
    assert.ok(managerPodsBefore.includes(holder), `lease holder ${holder} is one of ${managerPodsBefore.join(", ")}`);
    installed = true;

    // As shipped: non-root, read-only root filesystem, no capabilities, probes and resources.
    for (const pod of managers) {
      const container = pod.spec?.containers[0];
      assert.equal(pod.spec?.securityContext?.runAsNonRoot, true);
      assert.equal(container?.securityContext?.readOnlyRootFilesystem, true);
      assert.deepEqual(container?.securityContext?.capabilities?.drop, ["ALL"]);
      assert.equal(container?.readinessProbe?.httpGet?.path, "/readyz");
      assert.equal(container?.resources?.limits?.["memory"], "384Mi");
    }
  },
);

test(
  "the resource-group-controller runs as its own Deployment and ServiceAccount and writes the status of a user's ResourceGroup",
  { skip },
  async () => {
    assert.ok(installed, "the install test passed");
    const controllers = await timed("resource-group-controller pods Ready", () =>
      waitReady(
        "resource-group-system",
        "app.kubernetes.io/name=resource-group-controller",
        2,
        "both resource-group-controller pods to be Ready",
      ),
    );
    for (const pod of controllers) assert.equal(pod.spec?.serviceAccountName, "resource-group-controller");
    const namespace = await createNamespace("rg");
    await coreApi().createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: "listed", annotations: { "configmanagement.gke.io/token": "abcdef123456" } } },
    });
    const group = { group: "kpt.dev", version: "v1alpha1", namespace, plural: "resourcegroups" };
    // A group as an applier leaves it: labelled as Config Sync's, its spec recorded in observedGeneration.
    const created = (await customApi().createNamespacedCustomObject({
      ...group,
      body: {
        apiVersion: "kpt.dev/v1alpha1",
        kind: "ResourceGroup",
        metadata: { name: "user-group", labels: { "app.kubernetes.io/managed-by": "configmanagement.gke.io" } },
        spec: { resources: [{ group: "", kind: "ConfigMap", namespace, name: "listed" }] },
      },
    })) as KubeObject;
    await customApi().replaceNamespacedCustomObjectStatus({
      ...group,
      name: "user-group",
      body: { ...created, status: { observedGeneration: created.metadata.generation } },
    });
    const entry = await timed("user ResourceGroup status", () =>
      eventually(
        async () => {
          const read = (await customApi().getNamespacedCustomObject({ ...group, name: "user-group" })) as {
            status?: { resourceStatuses?: Array<Record<string, unknown>> };
          };
          return read.status?.resourceStatuses?.[0];
        },
        { timeoutMs: 60_000, what: "the user's ResourceGroup to get resourceStatuses" },
      ),
    );
    assert.deepEqual([entry["name"], entry["status"], entry["sourceHash"]], ["listed", "Current", "abcdef1"]);
  },
);

test(
  "a RepoSync gets a reconciler Deployment whose pod syncs a repository served from the node bridge",
  { skip },
  async () => {
    assert.ok(installed, "the install test passed");

    repoNamespace = await createNamespace("install");
    await repo.write("config/cm.yaml", configMap(repoNamespace, "from-git", { commit: "first" }));
    const first = await repo.commit("first");
    await grantRepoSyncReconciler(repoNamespace);
    await createRepoSyncFromBridge(repoNamespace, "config");

    const name = nsReconcilerName(repoNamespace, "repo-sync");
    const [pod] = await timed("RepoSync reconciler pod Ready", () =>
      waitReady(system, `${SyncLabel.Reconciler}=${name}`, 1, "the RepoSync's reconciler pod to be Ready"),
    );
    assert.equal(pod?.spec?.serviceAccountName, name, "the pod runs as the reconciler's own ServiceAccount");
    assert.equal(pod?.spec?.containers[0]?.securityContext?.readOnlyRootFilesystem, true);
    const status = await timed("RepoSync synced", () => repoSynced(repoNamespace, first));
    assert.deepEqual((status["sync"] as JsonObject | undefined)?.["errors"] ?? [], []);
    const cm = await coreApi().readNamespacedConfigMap({ name: "from-git", namespace: repoNamespace });
    assert.equal(cm.data?.["commit"], "first");
    // The fetch came from the pod, over the bridge.
    assert.ok(server.requests.some((r) => r.path.includes("git-upload-pack") && r.status === 200));
    const log = await coreApi().readNamespacedPodLog({
      name: pod?.metadata?.name ?? "",
      namespace: system,
      container: "reconciler",
    });
    assert.match(log, new RegExp(first.slice(0, 7)));
  },
);

test(
  "a RepoSync's kustomization renders in the pod's hydration-controller container, which has no ServiceAccount token",
  { skip },
  async () => {
    assert.ok(installed, "the install test passed");
    const namespace = await createNamespace("render");
    const dir = `rendered-${namespace}`;
    await repo.write(
      `${dir}/kustomization.yaml`,
      JSON.stringify({ namespace, configMapGenerator: [{ name: "generated", literals: ["from=kustomize"] }] }),
    );
    const commit = await repo.commit(`kustomization for ${namespace}`);
    await grantRepoSyncReconciler(namespace);
    await createRepoSyncFromBridge(namespace, dir);

    // The first pod has no render container: its reconciler annotates the RepoSync requires-rendering,
    // and the manager replaces the pod with one that has it (Recreate: the old pod is gone first).
    const name = nsReconcilerName(namespace, "repo-sync");
    const status = await timed("render RepoSync synced (through the pod restart)", () =>
      repoSynced(namespace, commit, 240_000),
    );
    assert.equal((status["rendering"] as JsonObject | undefined)?.["message"], "Rendering succeeded");
    const sync = (await customApi().getNamespacedCustomObject({
      group: "configsync.gke.io",
      version: "v1beta1",
      namespace,
      plural: "reposyncs",
      name: "repo-sync",
    })) as KubeObject;
    assert.equal(sync.metadata.annotations?.[SyncAnnotation.RequiresRendering], "true");
    const [pod] = await waitReady(system, `${SyncLabel.Reconciler}=${name}`, 1, "the render RepoSync's pod Ready");
    const generated = (await coreApi().listNamespacedConfigMap({ namespace })).items.filter((cm) =>
      cm.metadata?.name?.startsWith("generated-"),
    );
    assert.equal(generated.length, 1);
    assert.equal(generated[0]?.data?.["from"], "kustomize");
    // As the API server admitted the pod: the token in the reconciler container only.
    const tokenDir = "/var/run/secrets/kubernetes.io/serviceaccount";
    const render = pod?.spec?.containers.find((c) => c.name === "hydration-controller");
    assert.ok(render !== undefined, "the pod has a hydration-controller container");
    assert.ok(!(render.volumeMounts ?? []).some((m) => m.mountPath.startsWith("/var/run/secrets")));
    assert.ok(!(render.env ?? []).some((e) => e.name.startsWith("REDIS")));
    const reconciler = pod?.spec?.containers.find((c) => c.name === "reconciler");
    assert.ok((reconciler?.volumeMounts ?? []).some((m) => m.mountPath === tokenDir));
    if (hasKubectl) {
      // And on the node: no token file in the render container's filesystem.
      const probe = `process.stdout.write(String(require("fs").existsSync("${tokenDir}/token")))`;
      const inRender = await kubectl(
        "-n",
        system,
        "exec",
        pod?.metadata?.name ?? "",
        "-c",
        "hydration-controller",
        "--",
        "node",
        "-e",
        probe,
      );
      assert.equal(inRender, "false");
      const inReconciler = await kubectl(
        "-n",
        system,
        "exec",
        pod?.metadata?.name ?? "",
        "-c",
        "reconciler",
        "--",
        "node",
        "-e",
        probe,
      );
      assert.equal(inReconciler, "true");
    }
  },
);

test("a reconciler pod deleted is replaced by its Deployment without losing anything", { skip }, async () => {
  assert.ok(installed, "the install test passed");
  const core = coreApi();
  const name = nsReconcilerName(repoNamespace, "repo-sync");
  const selector = `${SyncLabel.Reconciler}=${name}`;
  const [old] = await readyPods(system, selector);
  assert.ok(old !== undefined);
  const before = await core.readNamespacedConfigMap({ name: "from-git", namespace: repoNamespace });
  await core.deleteNamespacedPod({ name: old.metadata?.name ?? "", namespace: system });

  const [replacement] = await timed("reconciler pod replaced", () =>
    eventually(
      async () => {
        const pods = await readyPods(system, selector);
        return pods.length === 1 && pods[0]?.metadata?.uid !== old.metadata?.uid ? pods : undefined;
      },
      { timeoutMs: 180_000, what: "a new reconciler pod to be Ready" },
    ),
  );
  assert.ok(replacement !== undefined);
  // Same object (not pruned and re-created), and the next commit syncs.
  const kept = await core.readNamespacedConfigMap({ name: "from-git", namespace: repoNamespace });
  assert.equal(kept.metadata?.uid, before.metadata?.uid);
  await repo.write("config/second.yaml", configMap(repoNamespace, "second", { commit: "second" }));
  const second = await repo.commit("second");
  await repoSynced(repoNamespace, second);
  const again = await core.readNamespacedConfigMap({ name: "from-git", namespace: repoNamespace });
  assert.equal(again.metadata?.uid, before.metadata?.uid);
  await core.readNamespacedConfigMap({ name: "second", namespace: repoNamespace });
});

test(
  "namespace deletion under a Foreground RepoSync completes with the reconciler running as a pod",
  { skip },
  async () => {
    assert.ok(installed, "the install test passed");
    const core = coreApi();
    const namespace = await createNamespace("foreground");
    await repo.write("foreground/cm.yaml", configMap(namespace, "from-git", { commit: "foreground" }));
    const commit = await repo.commit("foreground");
    await grantRepoSyncReconciler(namespace);
    await createRepoSyncFromBridge(namespace, "foreground", {
      [SyncAnnotation.DeletionPropagationPolicy]: "Foreground",
    });
    const name = nsReconcilerName(namespace, "repo-sync");
    await waitReady(system, `${SyncLabel.Reconciler}=${name}`, 1, "the Foreground RepoSync's reconciler pod");
    await repoSynced(namespace, commit);

    await core.deleteNamespace({ name: namespace });
    await timed("foreground namespace deletion", () =>
      eventually(
        async () => {
          try {
            await core.readNamespace({ name: namespace });
            return false;
          } catch (error) {
            if (statusCode(error) === 404) return true;
            throw error;
          }
        },
        { timeoutMs: 120_000, what: `namespace ${namespace} to be gone` },
      ),
    );
    // Its reconciler's Deployment goes with it.
    const apps = kubeConfig().makeApiClient(AppsV1Api);
    await eventually(
      async () => {
        try {
          await apps.readNamespacedDeployment({ name, namespace: system });
          return false;
        } catch (error) {
          if (statusCode(error) === 404) return true;
          throw error;
        }
      },
      { timeoutMs: 60_000, what: `Deployment ${name} to be removed` },
    );
  },
);

test(
  "the leader manager pod deleted: the other replica takes the Lease and new syncs get reconcilers",
  { skip },
  async () => {
    assert.ok(installed, "the install test passed");
    const core = coreApi();
    const holder = await eventually(leaseHolder, { timeoutMs: 30_000, what: "a Lease holder" });
    const survivor = managerPodsBefore.find((p) => p !== holder);
    assert.ok(survivor !== undefined, `another replica than ${holder} among ${managerPodsBefore.join(", ")}`);
    await core.deleteNamespacedPod({ name: holder, namespace: system });
    const next = await timed("leader handover", () =>
      eventually(
        async () => {
          const current = await leaseHolder();
          return current !== undefined && current !== holder ? current : undefined;
        },
        { timeoutMs: 120_000, what: "another manager to hold the Lease" },
      ),
    );
    // The leader gives the Lease up as it stops; the standby or the leader's replacement, whichever
    // asks first, takes it (client-go's election races the same way).
    // The replacement can take the Lease while it starts, before its readiness probe passed.
    await eventually(
      async () =>
        (await readyPods(system, "app.kubernetes.io/name=reconciler-manager")).some((p) => p.metadata?.name === next),
      { timeoutMs: 120_000, what: `the new holder ${next} to be a Ready manager pod` },
    );
    console.log(
      `# leader handover: ${holder} -> ${next} (${next === survivor ? "the standby" : "the replacement pod"})`,
    );

    // A RootSync made after the handover gets its reconciler from the new leader.
    const name = `install-root-${suffix()}`;
    const target = `root-target-${suffix()}`;
    await repo.write(
      "root/cm.yaml",
      `${JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: target } })}\n---\n${configMap(target, "from-root", { by: "root" })}`,
    );
    const commit = await repo.commit("root");
    await createRootSync(name, repo, {
      spec: {
        git: { repo: server.url("remote.git"), branch: repo.branch, dir: "root", auth: "none", period: "5s" },
      },
    });
    await timed("RootSync reconciler pod Ready", () =>
      waitReady(system, `${SyncLabel.Reconciler}=${rootReconcilerName(name)}`, 1, "the RootSync's reconciler pod"),
    );
    await rootSynced(name, commit);
    const cm = await core.readNamespacedConfigMap({ name: "from-root", namespace: target });
    assert.equal(cm.data?.["by"], "root");
    // The replica set replaced the deleted pod; two managers again.
    await waitReady(system, "app.kubernetes.io/name=reconciler-manager", 2, "two manager pods again");
  },
);

test("memory per reconciler pod, as the kubelet reports it", { skip }, async (t) => {
  assert.ok(installed, "the install test passed");
  const summary = await eventually(
    async () => {
      const raw = (await coreApi().connectGetNodeProxyWithPath({
        name: nodeNetwork.nodeName,
        path: "stats/summary",
      })) as unknown;
      const parsed = (typeof raw === "string" ? JSON.parse(raw) : raw) as {
        pods?: {
          podRef: { name: string; namespace: string };
          memory?: { workingSetBytes?: number; usageBytes?: number };
        }[];
      };
      const pods = (parsed.pods ?? []).filter((p) => p.podRef.namespace === system);
      const measured = (prefix: string) =>
        pods.some((p) => p.podRef.name.startsWith(prefix) && (p.memory?.workingSetBytes ?? 0) > 0);
      return measured("ns-reconciler-") && measured("root-reconciler-") ? pods : undefined;
    },
    { timeoutMs: 60_000, what: "the kubelet's summary to have both reconciler pods' memory" },
  );
  const mib = (n: number | undefined) => ((n ?? 0) / 1024 / 1024).toFixed(1);
  for (const pod of summary) {
    t.diagnostic(
      `${pod.podRef.name}: working set ${mib(pod.memory?.workingSetBytes)} MiB, usage ${mib(pod.memory?.usageBytes)} MiB`,
    );
    console.log(
      `# memory ${pod.podRef.name}: working set ${mib(pod.memory?.workingSetBytes)} MiB, usage ${mib(pod.memory?.usageBytes)} MiB`,
    );
  }
  const reconciler = summary.find((p) => p.podRef.name.startsWith("ns-reconciler-"));
  // Under the Deployment's memory limit, with room to spare.
  assert.ok((reconciler?.memory?.workingSetBytes ?? 0) < 512 * 1024 * 1024);
});

test("the Redis NetworkPolicy as shipped selects the manager and every reconciler pod", { skip }, async () => {
  assert.ok(installed, "the install test passed");
  // The bridge CNI enforces no policy, so this checks the selectors against the pods' real labels: where a
  // CNI does enforce it, a pod it leaves out cannot reach Redis.
  const policy = await kubeConfig()
    .makeApiClient(NetworkingV1Api)
    .readNamespacedNetworkPolicy({ name: "redis", namespace: system });
  const selectors = (policy.spec?.ingress ?? []).flatMap((rule) => (rule._from ?? []).map((peer) => peer.podSelector));
  const selects = (labels: Record<string, string>): boolean =>
    selectors.some(
      (selector) =>
        selector !== undefined &&
        Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value) &&
        (selector.matchExpressions ?? []).every((e) =>
          e.operator === "Exists"
            ? Object.hasOwn(labels, e.key)
            : e.operator === "In"
              ? (e.values ?? []).includes(labels[e.key] ?? "")
              : false,
        ),
    );
  const pods = (await coreApi().listNamespacedPod({ namespace: system })).items;
  const clients = pods.filter((p) => !(p.metadata?.name ?? "").startsWith("redis-"));
  assert.ok(clients.some((p) => (p.metadata?.name ?? "").startsWith("root-reconciler-")));
  assert.ok(clients.some((p) => (p.metadata?.name ?? "").startsWith("ns-reconciler-")));
  for (const pod of clients) {
    assert.ok(selects(pod.metadata?.labels ?? {}), `${pod.metadata?.name} (${JSON.stringify(pod.metadata?.labels)})`);
  }
});

test(
  "the manager's and the reconcilers' NetworkPolicies select their pods, on ports those pods serve",
  { skip },
  async () => {
    assert.ok(installed, "the install test passed");
    const networking = kubeConfig().makeApiClient(NetworkingV1Api);
    const pods = (await coreApi().listNamespacedPod({ namespace: system })).items;
    const byPrefix = (prefix: string): V1Pod[] => pods.filter((p) => (p.metadata?.name ?? "").startsWith(prefix));
    const groups = {
      "reconciler-manager": byPrefix("reconciler-manager-"),
      reconcilers: [...byPrefix("root-reconciler-"), ...byPrefix("ns-reconciler-")],
    };
    for (const [name, members] of Object.entries(groups)) {
      assert.ok(members.length > 0, `no pods for ${name}`);
      const spec = (await networking.readNamespacedNetworkPolicy({ name, namespace: system })).spec;
      const podSelector = spec?.podSelector ?? {};
      for (const pod of pods) {
        const labels = pod.metadata?.labels ?? {};
        assert.equal(selectsLabels(podSelector, labels), members.includes(pod), `${name} and ${pod.metadata?.name}`);
      }
      const served = new Set(
        members.flatMap((p) => p.spec?.containers.flatMap((c) => c.ports ?? []) ?? []).map((p) => p.containerPort),
      );
      for (const rule of spec?.ingress ?? [])
        for (const port of rule.ports ?? [])
          assert.ok(served.has(Number(port.port)), `${name}: port ${port.port} is served by none`);
    }
  },
);

test("no pod logged a refused request, a read-only write or a crash", { skip }, async (t) => {
  const core = coreApi();
  // The manager, Redis and reconcilers, and the resource-group-controller.
  const pods = [system, "resource-group-system"].map((namespace) => core.listNamespacedPod({ namespace }));
  const findings: string[] = [];
  const namespaces = new Set((await core.listNamespace()).items.map((n) => n.metadata?.name));
  for (const pod of (await Promise.all(pods)).flatMap((list) => list.items)) {
    const name = pod.metadata?.name ?? "";
    const podNamespace = pod.metadata?.namespace ?? system;
    // A RepoSync whose namespace a test deleted: the namespace's deletion removes the RoleBinding that lets
    // its reconciler read the RepoSync before the manager has torn the reconciler down, and a pass in
    // between is refused. That is the namespace's lifecycle, not missing RBAC.
    const syncNamespace = pod.metadata?.labels?.[SyncLabel.SyncNamespace];
    const namespaceGone = syncNamespace !== undefined && syncNamespace !== system && !namespaces.has(syncNamespace);
    for (const status of pod.status?.containerStatuses ?? []) {
      if (status.restartCount > 0)
        findings.push(`${name}: ${status.restartCount} restarts (${JSON.stringify(status.lastState)})`);
    }
    // Every container's log: a reconciler pod also runs the hydration-controller (render) container.
    for (const container of pod.spec?.containers ?? []) {
      const log = await core.readNamespacedPodLog({ name, namespace: podNamespace, container: container.name });
      // DRIFTLESS_E2E_LOG_DIR keeps every pod's log (CI uploads it when the suite fails).
      const keep = process.env["DRIFTLESS_E2E_LOG_DIR"];
      if (keep !== undefined) await writeFile(join(keep, `${name}.${container.name}.log`), log);
      for (const line of log.split("\n")) {
        // A namespace being deleted refuses new objects with a 403 too: that is its lifecycle, not our RBAC.
        const refused = line.replaceAll(
          /forbidden: unable to create new content in namespace \S+ because it is being terminated( \(403 Forbidden\))?/g,
          "",
        );
        if (namespaceGone && /forbidden/i.test(refused)) continue;
        if (/forbidden|EROFS|EACCES|permission denied|"level":"error"/i.test(refused))
          findings.push(`${name}/${container.name}: ${line}`);
      }
    }
  }
  const events = [system, "resource-group-system"].map((namespace) => core.listNamespacedEvent({ namespace }));
  for (const event of (await Promise.all(events)).flatMap((list) => list.items)) {
    if (event.type !== "Warning") continue;
    const line = `${event.involvedObject.kind}/${event.involvedObject.name}: ${event.reason}: ${event.message}`;
    t.diagnostic(`warning event ${line}`);
    // The node has no cluster DNS (pods fall back to the node's resolv.conf): that is the test cluster's, not ours.
    // What a broken spec, image or RBAC causes; not the node's transients (no cluster DNS, the kubelet's
    // Secret/ConfigMap caches lagging under load, readiness probes failing while a container starts).
    // A container whose env reads a Secret fails to start ("Failed") until that cache has synced, then
    // starts; a Secret that is missing says "not found" instead.
    const cacheLag = /failed to sync (secret|configmap) cache: timed out waiting for the condition/.test(
      event.message ?? "",
    );
    const defect =
      (/^(BackOff|Failed|FailedCreate|FailedScheduling|Evicted|OOMKilling)$/.test(event.reason ?? "") && !cacheLag) ||
      (event.reason === "Unhealthy" && /Liveness/.test(event.message ?? ""));
    if (defect) findings.push(line);
  }
  assert.deepEqual(findings, []);
});

test("cluster down leaves no containers, bridge or iptables chains", { skip }, async () => {
  await timed("cluster down", () => down(stateDir));
  // The node is the machine's: another test file waiting for it may have started its own already.
  const owner = "/run/driftless-node/owner";
  if (existsSync(owner)) {
    const holder = (JSON.parse(await readFile(owner, "utf8")) as { stateDir: string }).stateDir;
    assert.notEqual(holder, stateDir, "this file's node still holds the machine's node slot");
    return;
  }
  assert.equal(existsSync(`/sys/class/net/${nodeNetwork.bridge}`), false, "the bridge is left");
  assert.deepEqual(await listNodeChains(), [], "iptables chains left");
  assert.deepEqual(await listContainers(), [], "containers left");
});
