/**
 * A new spec (spec.git.revision moved, say) while a pass waits for what it applied to become Current: Config
 * Sync's manager rolls the reconciler pod on a new generation, so the new revision syncs at once, not after the
 * old pass's reconcileTimeout (5 minutes by default) on an object that may never be ready, nor after a fetch
 * hanging on the old repository for its 2-minute timeout.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { AppsV1Api } from "@kubernetes/client-node";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  kubeConfig,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  testNamespace,
  TestRepo,
  updateRootSyncSpec,
  type JsonObject,
} from "../../support/index.ts";
import { denyByPolicy } from "../../support/admission-policy.ts";
import { silentPort } from "../../support/silent-port.ts";

/** A Deployment nothing runs (no kubelet here): kstatus keeps it InProgress, and the pass waits. */
const neverReady = (namespace: string, name: string): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: c, image: registry.invalid/never:1}]}
`;

const appsApi = (): AppsV1Api => kubeConfig("admin").makeApiClient(AppsV1Api);
const syncingCondition = async (name: string): Promise<JsonObject | undefined> =>
  ((await rootSyncStatus(name))["conditions"] as JsonObject[] | undefined)?.find((c) => c["type"] === "Syncing");

/**
 * A RootSync at tag v1 (`atTag`, with a Deployment "stuck" that never becomes ready) whose branch's tip holds
 * `atTip`, its reconciler started; returns once the pass on v1 waits for the Deployment. The default
 * reconcileTimeout (5 minutes): the old pass alone would hold a new spec back that long.
 */
async function passWaitingOnTag(
  t: TestContext,
  namespace: string,
  name: string,
  atTag: Record<string, string>,
  atTip: Record<string, string>,
): Promise<{ tagged: string; tip: string }> {
  const repo = await TestRepo.create(t);
  await repo.write("config/deployment.yaml", neverReady(namespace, "stuck"));
  for (const [path, text] of Object.entries(atTag)) await repo.write(path, text);
  const tagged = await repo.commit("a Deployment that never becomes ready");
  await repo.git("tag", "v1");
  await repo.git("push", "-q", "origin", "v1");
  await repo.remove("config/deployment.yaml");
  for (const [path, text] of Object.entries(atTip)) await repo.write(path, text);
  const tip = await repo.commit("the Deployment replaced");
  await createRootSync(name, repo, {
    spec: { git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none", revision: "v1" } },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  // Syncing=True names v1 from its fetch on; the Deployment is there once the pass waits for it.
  await eventually(
    async () => {
      const condition = await syncingCondition(name);
      if (condition?.["status"] !== "True" || condition["commit"] !== tagged) return false;
      return appsApi()
        .readNamespacedDeployment({ namespace, name: "stuck" })
        .then(
          () => true,
          () => false,
        );
    },
    { what: "the pass on v1 waiting for its Deployment" },
  );
  return { tagged, tip };
}

test("a revision changed while a pass waits on the old one is synced at once, and the old pass's objects are pruned from the inventory it wrote", async (t) => {
  const namespace = await testNamespace(t, "spec-change");
  const name = `spec-change-${suffix()}`;
  const { tip } = await passWaitingOnTag(
    t,
    namespace,
    name,
    {},
    {
      "config/cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ready, namespace: ${namespace}}\ndata: {k: v}\n`,
    },
  );

  await updateRootSyncSpec(name, (spec) => ({ ...spec, git: { ...(spec["git"] as JsonObject), revision: "HEAD" } }));
  await eventually(async () => (await rootSyncStatus(name))["lastSyncedCommit"] === tip, {
    timeoutMs: 60_000,
    what: "the branch's tip synced after the revision moved to HEAD",
  });
  const status = await rootSyncStatus(name);
  const sync = status["sync"] as JsonObject;
  assert.equal(sync["commit"], tip);
  assert.deepEqual((sync["gitStatus"] as JsonObject)["revision"], "HEAD");
  // The pass on the new revision pruned what the old one applied (it was recorded before the apply).
  await eventually(
    async () => {
      try {
        const live = await appsApi().readNamespacedDeployment({ namespace, name: "stuck" });
        return live.metadata?.deletionTimestamp !== undefined;
      } catch (error) {
        return statusCode(error) === 404;
      }
    },
    { what: "the v1 Deployment pruned" },
  );
});

test("a repository fixed in the spec while the fetch hangs on the old one is synced at once", async (t) => {
  const silent = await silentPort(t);
  const name = `spec-change-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/cm.yaml",
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: default}\n`,
  );
  const commit = await repo.commit("a ConfigMap");
  t.after(() =>
    coreApi()
      .deleteNamespacedConfigMap({ name, namespace: "default" })
      .catch(() => undefined),
  );
  await createRootSync(name, repo, {
    spec: {
      git: {
        repo: `http://127.0.0.1:${String(silent.port)}/repo.git`,
        branch: repo.branch,
        dir: "config",
        auth: "none",
      },
    },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await eventually(() => silent.connections() > 0, { what: "the fetch from the silent server begun" });

  await updateRootSyncSpec(name, (spec) => ({ ...spec, git: { ...(spec["git"] as JsonObject), repo: repo.url } }));
  await eventually(async () => (await rootSyncStatus(name))["lastSyncedCommit"] === commit, {
    timeoutMs: 60_000,
    what: "the fixed repository synced",
  });
  const source = (await rootSyncStatus(name))["source"] as JsonObject;
  assert.equal(source["errors"], undefined, "the cut fetch of the old repository was reported");
});

test("a revision changed while a dependent waits for its dependency (depends-on) is synced at once", async (t) => {
  const namespace = await testNamespace(t, "spec-change");
  const name = `spec-change-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/deployment.yaml", neverReady(namespace, "stuck"));
  await repo.write(
    "config/dependent.yaml",
    `apiVersion: v1
kind: ConfigMap
metadata:
  name: dependent
  namespace: ${namespace}
  annotations:
    config.kubernetes.io/depends-on: apps/namespaces/${namespace}/Deployment/stuck
`,
  );
  await repo.commit("a ConfigMap waiting for a Deployment that never becomes ready");
  await repo.git("tag", "v1");
  await repo.git("push", "-q", "origin", "v1");
  await repo.remove("config");
  await repo.write(
    "config/cm.yaml",
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ready, namespace: ${namespace}}\n`,
  );
  const tip = await repo.commit("both replaced by a ConfigMap");
  await createRootSync(name, repo, {
    spec: { git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none", revision: "v1" } },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  const apps = kubeConfig("admin").makeApiClient(AppsV1Api);
  await eventually(
    () =>
      apps.readNamespacedDeployment({ namespace, name: "stuck" }).then(
        () => true,
        () => false,
      ),
    { what: "the dependency applied, its dependent waiting for it" },
  );

  await updateRootSyncSpec(name, (spec) => ({ ...spec, git: { ...(spec["git"] as JsonObject), revision: "HEAD" } }));
  await eventually(async () => (await rootSyncStatus(name))["lastSyncedCommit"] === tip, {
    timeoutMs: 60_000,
    what: "the branch's tip synced after the revision moved to HEAD",
  });
});

const configMap = (namespace: string, name: string, annotations: Record<string, string> = {}): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${namespace}, annotations: ${JSON.stringify(annotations)}}\n`;

test("a revision changed while a wave of the apply waits starts no later wave of the old commit", async (t) => {
  const namespace = await testNamespace(t, "spec-change");
  const name = `spec-change-${suffix()}`;
  const repo = await TestRepo.create(t);
  const dependsOn = (id: string): Record<string, string> => ({ "config.kubernetes.io/depends-on": id });
  // Wave 1: the Deployment and "first"; wave 2: "waiting" (on the Deployment) and "second"; wave 3: "third".
  await repo.write("config/deployment.yaml", neverReady(namespace, "stuck"));
  await repo.write("config/first.yaml", configMap(namespace, "first"));
  await repo.write(
    "config/waiting.yaml",
    configMap(namespace, "waiting", dependsOn(`apps/namespaces/${namespace}/Deployment/stuck`)),
  );
  await repo.write(
    "config/second.yaml",
    configMap(namespace, "second", dependsOn(`/namespaces/${namespace}/ConfigMap/first`)),
  );
  // Detached when pruned: had the old pass applied it, it would outlive the pass on the new revision.
  await repo.write(
    "config/third.yaml",
    configMap(namespace, "third", {
      ...dependsOn(`/namespaces/${namespace}/ConfigMap/second`),
      "client.lifecycle.config.k8s.io/deletion": "detach",
    }),
  );
  await repo.commit("three waves, the second waiting for a Deployment that never becomes ready");
  await repo.git("tag", "v1");
  await repo.git("push", "-q", "origin", "v1");
  await repo.remove("config");
  await repo.write("config/cm.yaml", configMap(namespace, "ready"));
  const tip = await repo.commit("all replaced by a ConfigMap");
  await createRootSync(name, repo, {
    spec: { git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none", revision: "v1" } },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  const exists = (configMapName: string): Promise<boolean> =>
    coreApi()
      .readNamespacedConfigMap({ namespace, name: configMapName })
      .then(
        () => true,
        () => false,
      );
  // "second" is written while "waiting" waits, in the same wave: the pass is in its second wave.
  await eventually(() => exists("second"), { what: "the pass on v1 in its second wave" });

  await updateRootSyncSpec(name, (spec) => ({ ...spec, git: { ...(spec["git"] as JsonObject), revision: "HEAD" } }));
  await eventually(async () => (await rootSyncStatus(name))["lastSyncedCommit"] === tip, {
    timeoutMs: 60_000,
    what: "the branch's tip synced after the revision moved to HEAD",
  });
  assert.equal(await exists("third"), false, "the old pass applied its third wave after the spec changed");
});

/** The names the sync's ResourceGroup records (spec.resources). */
async function recordedNames(name: string): Promise<string[]> {
  const group = (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
  const resources = ((group["spec"] as JsonObject | undefined)?.["resources"] ?? []) as JsonObject[];
  return resources.map((r) => String(r["name"])).sort();
}

test("a revision changed while a pass waits leaves a new object the API server refused out of the ResourceGroup, as a pass that ran to its end does", async (t) => {
  const namespace = await testNamespace(t, "spec-change");
  const name = `spec-change-${suffix()}`;
  const policy = `deny-${suffix()}`;
  await denyByPolicy(t, policy, {
    rule: { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] },
    when: `object.metadata.name == "denied" && object.metadata.namespace == "${namespace}"`,
    message: "ConfigMaps named denied are not allowed here",
  });
  const denied = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "denied", namespace } };
  await eventually(
    () =>
      coreApi()
        .createNamespacedConfigMap({ namespace, body: denied, dryRun: "All" })
        .then(
          () => false,
          () => true,
        ),
    { what: "the admission policy enforced" },
  );
  const { tip } = await passWaitingOnTag(
    t,
    namespace,
    name,
    { "config/denied.yaml": configMap(namespace, "denied") },
    { "config/ready.yaml": configMap(namespace, "ready") },
  );

  await updateRootSyncSpec(name, (spec) => ({ ...spec, git: { ...(spec["git"] as JsonObject), revision: "HEAD" } }));
  await eventually(
    async () => {
      const condition = await syncingCondition(name);
      return condition?.["status"] === "False" && condition["commit"] === tip;
    },
    { timeoutMs: 60_000, what: "the pass on the branch's tip ended" },
  );
  assert.ok(!(await recordedNames(name)).includes("denied"), "the refused ConfigMap recorded in the ResourceGroup");
});
