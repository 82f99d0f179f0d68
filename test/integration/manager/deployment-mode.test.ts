/**
 * deployment mode on the local control plane: there is no kubelet, so no reconciler pod ever runs;
 * what is checked is what the manager creates (names as Config Sync's) and removes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { syncRoleName } from "@driftless/controller";
import type { KubeObject } from "@driftless/kube";
import { eventually, suffix } from "../../support/index.ts";
import {
  admin,
  conditionOf,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  repoSyncObject,
  rootSyncObject,
  startManager,
  systemNamespace,
} from "./helpers.ts";

const git = { repo: "https://example.invalid/config.git", branch: "main" };
const subjects = (binding: KubeObject | undefined): string[] =>
  ((binding?.["subjects"] ?? []) as { name: string }[]).map((s) => s.name);
const roleRefOf = (binding: KubeObject | undefined): unknown =>
  (binding?.["roleRef"] as { kind: string; name: string } | undefined)?.name;

interface Container {
  name: string;
  env: { name: string; value: string }[];
  securityContext: Record<string, unknown>;
  resources: Record<string, unknown>;
}
function podSpec(deployment: KubeObject | undefined): {
  serviceAccountName: string;
  containers: Container[];
  securityContext: Record<string, unknown>;
} {
  return ((deployment?.["spec"] as Record<string, unknown>)["template"] as { spec: never }).spec;
}
function templateAnnotations(deployment: KubeObject | undefined): Record<string, string> {
  return (
    (
      (deployment?.["spec"] as Record<string, unknown>)["template"] as {
        metadata: { annotations?: Record<string, string> };
      }
    ).metadata.annotations ?? {}
  );
}

function templateLabels(deployment: KubeObject | undefined): Record<string, string> {
  return (
    ((deployment?.["spec"] as Record<string, unknown>)["template"] as { metadata: { labels?: Record<string, string> } })
      .metadata.labels ?? {}
  );
}

test("a RepoSync gets a Deployment, ServiceAccount and a RoleBinding in its namespace only, all removed with it", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const namespace = await createNamespace(t, "dep");
  const other = `team-${suffix()}`;
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, git));
  await createSync(t, repoSyncObject(namespace, other, manager.scope, git));
  const names = [`ns-reconciler-${namespace}`, `ns-reconciler-${namespace}-${other}-${other.length}`];

  for (const name of names) {
    const deployment = await eventually(() => getObject(Mapping.Deployment, systemNamespace, name), {
      what: `Deployment ${name}`,
    });
    const pod = podSpec(deployment);
    assert.equal(pod.serviceAccountName, name);
    assert.equal(pod.securityContext["runAsNonRoot"], true);
    const container = pod.containers[0];
    assert.ok(container !== undefined);
    assert.equal(container.securityContext["readOnlyRootFilesystem"], true);
    assert.equal(container.securityContext["allowPrivilegeEscalation"], false);
    assert.ok(container.resources["requests"] !== undefined, "no resource requests");
    const env = Object.fromEntries(container.env.map((e) => [e.name, e.value]));
    assert.equal(env["SYNC_KIND"], "RepoSync");
    assert.equal(env["SYNC_NAMESPACE"], namespace);
    assert.equal(env["DRIFTLESS_QUEUE_PREFIX"], manager.scope.queuePrefix);
    assert.ok(await getObject(Mapping.ServiceAccount, systemNamespace, name), `ServiceAccount ${name}`);
  }
  const binding = await getObject(Mapping.RoleBinding, namespace, "configsync.gke.io:ns-reconciler");
  assert.equal(roleRefOf(binding), "configsync.gke.io:ns-reconciler");
  assert.deepEqual(subjects(binding).sort(), [...names].sort(), "one shared RoleBinding lists both reconcilers");
  // Cluster-wide, a RepoSync reconciler may only read CRDs (its custom resources' schemas).
  const clusterBindings = await (await admin()).list(Mapping.ClusterRoleBinding);
  const crdReader = "configsync.gke.io:ns-reconciler-crd-reader";
  assert.deepEqual(
    clusterBindings.items
      .filter((b) => subjects(b).some((s) => names.includes(s)))
      .map((b) => `${b.metadata.name} -> ${roleRefOf(b)}`),
    [`${crdReader} -> ${crdReader}`],
    "a RepoSync reconciler is bound cluster-wide beyond reading CRDs",
  );
  const sync = await eventually(
    async () => {
      const s = await getSync("RepoSync", namespace, "repo-sync");
      return conditionOf(s, "Reconciling")?.status === "True" ? s : undefined;
    },
    { what: "Reconciling=True while the Deployment is not available" },
  );
  assert.equal(conditionOf(sync, "Reconciling")?.reason, "Deployment");

  // A spec change rolls the pod template; a Deployment deleted by hand comes back.
  const client = await admin();
  const before = templateAnnotations(await getObject(Mapping.Deployment, systemNamespace, names[0] ?? ""));
  await client.patch(Mapping.RepoSync, namespace, "repo-sync", { spec: { git: { dir: "elsewhere" } } }, "merge");
  await eventually(
    async () =>
      JSON.stringify(templateAnnotations(await getObject(Mapping.Deployment, systemNamespace, names[0] ?? ""))) !==
      JSON.stringify(before),
    {
      what: "the pod template changed",
    },
  );
  await client.delete(Mapping.Deployment, systemNamespace, names[0] ?? "");
  await eventually(
    async () =>
      (await getObject(Mapping.Deployment, systemNamespace, names[0] ?? ""))?.metadata.deletionTimestamp ===
        undefined && (await getObject(Mapping.Deployment, systemNamespace, names[0] ?? "")) !== undefined,
    {
      what: "the Deployment re-created",
    },
  );

  await client.delete(Mapping.RepoSync, namespace, other);
  await eventually(async () => (await getSync("RepoSync", namespace, other)) === undefined, {
    what: "the second RepoSync deleted",
  });
  assert.equal(await getObject(Mapping.Deployment, systemNamespace, names[1] ?? ""), undefined);
  assert.equal(await getObject(Mapping.ServiceAccount, systemNamespace, names[1] ?? ""), undefined);
  assert.deepEqual(
    subjects(await getObject(Mapping.RoleBinding, namespace, "configsync.gke.io:ns-reconciler")),
    [names[0]],
    "the remaining reconciler keeps its binding",
  );

  await client.delete(Mapping.RepoSync, namespace, "repo-sync");
  await eventually(async () => (await getSync("RepoSync", namespace, "repo-sync")) === undefined, {
    what: "the RepoSync deleted",
  });
  assert.equal(await getObject(Mapping.Deployment, systemNamespace, names[0] ?? ""), undefined);
  assert.equal(await getObject(Mapping.RoleBinding, namespace, "configsync.gke.io:ns-reconciler"), undefined);
});

test("a RootSync is bound to cluster-admin, or to its roleRefs instead; bindings follow the spec and go with the sync", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const namespace = await createNamespace(t, "roles");
  const name = `root-${suffix()}`;
  const reconciler = `root-reconciler-${name}`;
  await createSync(t, rootSyncObject(name, manager.scope, git));
  const legacy = "configsync.gke.io:root-reconciler";
  const base = "configsync.gke.io:root-reconciler-base";
  await eventually(
    async () => subjects(await getObject(Mapping.ClusterRoleBinding, undefined, legacy)).includes(reconciler),
    { what: "bound to cluster-admin" },
  );
  assert.equal(roleRefOf(await getObject(Mapping.ClusterRoleBinding, undefined, legacy)), "cluster-admin");
  // The manager binds the identity before it creates the workload: the Deployment may follow a moment later.
  await eventually(async () => (await getObject(Mapping.Deployment, systemNamespace, reconciler)) !== undefined, {
    what: "the reconciler Deployment",
  });

  const client = await admin();
  const roleRefs = [
    { kind: "ClusterRole", name: "view" },
    { kind: "Role", name: "editor", namespace },
  ];
  await client.patch(Mapping.RootSync, systemNamespace, name, { spec: { override: { roleRefs } } }, "merge");
  const selector = `configsync.gke.io/sync-kind=RootSync,configsync.gke.io/sync-name=${name}`;
  const ownedAll = async (): Promise<KubeObject[]> => [
    ...(await client.list(Mapping.ClusterRoleBinding, { labelSelector: selector })).items,
    ...(await client.list(Mapping.RoleBinding, { labelSelector: selector })).items,
  ];
  // The bindings of its roleRefs: all it owns but the binding of its own-objects Role, which every sync has.
  const owned = async (): Promise<KubeObject[]> =>
    (await ownedAll()).filter((b) => b.metadata.name !== syncRoleName(reconciler));
  await eventually(async () => (await owned()).length === 2, { what: "one binding per roleRef" });
  for (const binding of await owned()) {
    assert.ok(
      binding.metadata.name.startsWith(`${reconciler}-`),
      `${binding.metadata.name} is not named after the reconciler`,
    );
    assert.deepEqual(subjects(binding), [reconciler]);
  }
  const byKind = Object.fromEntries((await owned()).map((b) => [b.kind, b]));
  assert.equal(roleRefOf(byKind["ClusterRoleBinding"]), "view");
  assert.equal(roleRefOf(byKind["RoleBinding"]), "editor");
  assert.equal(byKind["RoleBinding"]?.metadata.namespace, namespace);
  assert.ok(
    subjects(await getObject(Mapping.ClusterRoleBinding, undefined, base)).includes(reconciler),
    "not bound to the base role",
  );
  assert.ok(
    !subjects(await getObject(Mapping.ClusterRoleBinding, undefined, legacy)).includes(reconciler),
    "still cluster-admin despite roleRefs",
  );

  await client.patch(
    Mapping.RootSync,
    systemNamespace,
    name,
    { spec: { override: { roleRefs: [{ kind: "ClusterRole", name: "view" }] } } },
    "merge",
  );
  await eventually(async () => (await owned()).length === 1, { what: "the dropped roleRef's binding removed" });

  await client.delete(Mapping.RootSync, systemNamespace, name);
  await eventually(async () => (await getSync("RootSync", systemNamespace, name)) === undefined, {
    what: "the RootSync deleted",
  });
  assert.deepEqual(await ownedAll(), []);
  assert.ok(!subjects(await getObject(Mapping.ClusterRoleBinding, undefined, base)).includes(reconciler));
  assert.equal(await getObject(Mapping.Deployment, systemNamespace, reconciler), undefined);
  assert.equal(await getObject(Mapping.ServiceAccount, systemNamespace, reconciler), undefined);
});

test("a RootSync's reconciler Deployment carries Config Sync's labels, its generation's follows a spec change, and a memory request above the default limit raises that limit", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const name = `labels-${suffix()}`;
  const reconciler = `root-reconciler-${name}`;
  // Config Sync's reconciler has requests only; driftless's default 512Mi limit rises to the request.
  const resources = [{ containerName: "reconciler", memoryRequest: "1Gi" }];
  await createSync(t, rootSyncObject(name, manager.scope, git, {}, { resources }));
  const deployment = await eventually(() => getObject(Mapping.Deployment, systemNamespace, reconciler), {
    what: `Deployment ${reconciler}`,
  });
  const reconcilerContainer = podSpec(deployment).containers.find((c) => c.name === "reconciler");
  assert.deepEqual(reconcilerContainer?.resources["limits"], { memory: "1Gi" });
  assert.equal(conditionOf(await getSync("RootSync", systemNamespace, name), "Stalled")?.status ?? "False", "False");

  const generationLabels = (d: KubeObject | undefined): (string | undefined)[] => [
    d?.metadata.labels?.["configsync.gke.io/sync-generation"],
    templateLabels(d)["configsync.gke.io/sync-generation"],
  ];
  assert.equal(deployment.metadata.labels?.["app"], "reconciler");
  assert.equal(templateLabels(deployment)["app"], "reconciler");
  assert.deepEqual(generationLabels(deployment), ["1", "1"]);

  const client = await admin();
  await client.patch(Mapping.RootSync, systemNamespace, name, { spec: { git: { dir: "elsewhere" } } }, "merge");
  const generation = String((await getSync("RootSync", systemNamespace, name))?.metadata.generation);
  assert.equal(generation, "2");
  await eventually(
    async () =>
      JSON.stringify(generationLabels(await getObject(Mapping.Deployment, systemNamespace, reconciler))) ===
      JSON.stringify([generation, generation]),
    { what: "the Deployment and its pod template labelled with the new generation" },
  );
  const selector = (
    (await getObject(Mapping.Deployment, systemNamespace, reconciler))?.["spec"] as {
      selector: unknown;
    }
  ).selector;
  assert.deepEqual(selector, { matchLabels: { "configsync.gke.io/reconciler": reconciler } });
});

/**
 * Config Sync's reconciler Deployment as its reconciler-manager leaves it (server-side applied by
 * `reconciler-manager`): selected by `app` and `configsync.gke.io/deployment-name`, with git-sync and
 * otel-agent beside the reconciler.
 */
function configSyncReconcilerDeployment(
  reconciler: string,
  sync: string,
  of: { readonly kind: string; readonly namespace: string } = { kind: "RootSync", namespace: systemNamespace },
): KubeObject {
  const syncLabels = {
    "configsync.gke.io/managed-by": "reconciler-manager",
    "configsync.gke.io/sync-kind": of.kind,
    "configsync.gke.io/sync-name": sync,
    "configsync.gke.io/sync-namespace": of.namespace,
  };
  const selector = { app: "reconciler", "configsync.gke.io/deployment-name": reconciler };
  const container = (name: string, image: string) => ({ name, image });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: reconciler, namespace: systemNamespace, labels: { app: "reconciler", ...syncLabels } },
    spec: {
      replicas: 1,
      selector: { matchLabels: selector },
      strategy: { type: "Recreate" },
      template: {
        metadata: { labels: { ...selector, ...syncLabels, "configsync.gke.io/reconciler": reconciler } },
        spec: {
          serviceAccountName: reconciler,
          containers: [
            container("reconciler", "RECONCILER_IMAGE_NAME"),
            container("git-sync", "GIT_SYNC_IMAGE_NAME"),
            container("otel-agent", "OTELCONTRIBCOL_IMAGE_NAME"),
          ],
        },
      },
    },
  };
}

test("taking over from Config Sync: its reconciler Deployment (another selector) is replaced by driftless's, not left Stalled on an immutable field", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const name = `cs-${suffix()}`;
  const reconciler = `root-reconciler-${name}`;
  const client = await admin();
  const left = await client.patch(
    Mapping.Deployment,
    systemNamespace,
    reconciler,
    configSyncReconcilerDeployment(reconciler, name),
    "apply",
    { fieldManager: "reconciler-manager", force: true },
  );
  t.after(() => client.delete(Mapping.Deployment, systemNamespace, reconciler).catch(() => undefined));
  await createSync(t, rootSyncObject(name, manager.scope, git));

  const replaced = await eventually(
    async () => {
      const live = await getObject(Mapping.Deployment, systemNamespace, reconciler);
      return live !== undefined && live.metadata.uid !== left.metadata.uid ? live : undefined;
    },
    { what: "Config Sync's reconciler Deployment replaced" },
  );
  const spec = replaced["spec"] as { selector: unknown };
  assert.deepEqual(spec.selector, { matchLabels: { "configsync.gke.io/reconciler": reconciler } });
  assert.deepEqual(
    podSpec(replaced).containers.map((c) => c.name),
    ["reconciler"],
    "Config Sync's git-sync or otel-agent kept running beside driftless's reconciler",
  );
  const stalled = conditionOf(await getSync("RootSync", systemNamespace, name), "Stalled");
  assert.notEqual(stalled?.status, "True", `Stalled: ${String(stalled?.message)}`);
});

test("taking over from Config Sync: a RepoSync whose reconciler name Config Sync's reconciler of another sync holds is refused, and that Deployment is neither deleted nor adopted", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  // RepoSync <ns>/db and RepoSync <ns>-db-2/repo-sync are both ns-reconciler-<ns>-db-2 (Config Sync's naming).
  const namespace = await createNamespace(t, "cs");
  const victim = { kind: "RepoSync", namespace: `${namespace}-db-2` };
  const reconciler = `ns-reconciler-${namespace}-db-2`;
  const client = await admin();
  const left = await client.patch(
    Mapping.Deployment,
    systemNamespace,
    reconciler,
    configSyncReconcilerDeployment(reconciler, "repo-sync", victim),
    "apply",
    { fieldManager: "reconciler-manager", force: true },
  );
  t.after(() => client.delete(Mapping.Deployment, systemNamespace, reconciler).catch(() => undefined));
  await createSync(t, repoSyncObject(namespace, "db", manager.scope, git));

  // Ends on the refusal, or on the other sync's Deployment gone or replaced (the tenant's takeover).
  const stalled = await eventually(
    async () => {
      const live = await getObject(Mapping.Deployment, systemNamespace, reconciler);
      if (live?.metadata.uid !== left.metadata.uid) return { replaced: true, message: "" };
      const condition = conditionOf(await getSync("RepoSync", namespace, "db"), "Stalled");
      return condition?.status === "True" ? { replaced: false, message: String(condition.message) } : undefined;
    },
    { what: "RepoSync db Stalled, or the other sync's Deployment replaced" },
  );
  assert.equal(stalled.replaced, false, "the RepoSync deleted the reconciler Config Sync runs for another sync");
  assert.match(stalled.message, new RegExp(`already used by RepoSync ${victim.namespace}/repo-sync`));
  const kept = await getObject(Mapping.Deployment, systemNamespace, reconciler);
  assert.equal(kept?.metadata.labels?.["configsync.gke.io/sync-namespace"], victim.namespace);
  assert.equal(kept?.metadata.labels?.["app.kubernetes.io/managed-by"], undefined, "adopted by the newcomer");
});

test("a Role and RoleBinding a tenant labels as another namespace's RepoSync's are that tenant's: setting up that RepoSync deletes neither", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const victim = await createNamespace(t, "victim");
  const tenant = await createNamespace(t, "tenant");
  const reconciler = `ns-reconciler-${victim}`;
  await createSync(t, repoSyncObject(victim, "repo-sync", manager.scope, git));
  await eventually(() => getObject(Mapping.Deployment, systemNamespace, reconciler), {
    what: `Deployment ${reconciler}`,
  });

  // The labels the manager puts on a RepoSync's own Roles and bindings, written by the tenant in its namespace.
  const labels = {
    "app.kubernetes.io/managed-by": "reconciler-manager",
    "configsync.gke.io/sync-kind": "RepoSync",
    "configsync.gke.io/sync-name": "repo-sync",
    "configsync.gke.io/sync-namespace": victim,
  };
  const client = await admin();
  const metadata = { name: "tenant-own", namespace: tenant, labels };
  await client.create(Mapping.Role, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata,
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
  });
  await client.create(Mapping.RoleBinding, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata,
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "tenant-own" },
    subjects: [{ kind: "ServiceAccount", name: "default", namespace: tenant }],
  });

  // A spec change: the manager sets the RepoSync up again, its identity (and stale bindings) before the Deployment.
  const before = templateAnnotations(await getObject(Mapping.Deployment, systemNamespace, reconciler));
  await client.patch(Mapping.RepoSync, victim, "repo-sync", { spec: { git: { dir: "elsewhere" } } }, "merge");
  await eventually(
    async () =>
      !isDeepStrictEqual(templateAnnotations(await getObject(Mapping.Deployment, systemNamespace, reconciler)), before),
    { what: "the RepoSync set up again (its pod template changed)" },
  );
  assert.ok(await getObject(Mapping.Role, tenant, "tenant-own"), "the tenant's Role was deleted as the RepoSync's");
  assert.ok(
    await getObject(Mapping.RoleBinding, tenant, "tenant-own"),
    "the tenant's RoleBinding was deleted as the RepoSync's",
  );
});

test("a RootSync being deleted keeps its reconciler's pod template: the generation deletion bumps rolls no pod mid-finalizer", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const name = `deleting-${suffix()}`;
  const reconciler = `root-reconciler-${name}`;
  await createSync(t, rootSyncObject(name, manager.scope, git));
  const before = await eventually(() => getObject(Mapping.Deployment, systemNamespace, reconciler), {
    what: `Deployment ${reconciler}`,
  });
  const client = await admin();
  // The finalizer the running reconciler would hold (no kubelet here, so none runs): deletion waits on it.
  const finalizer = "configsync.gke.io/reconciler";
  const live = await getSync("RootSync", systemNamespace, name);
  await client.patch(
    Mapping.RootSync,
    systemNamespace,
    name,
    { metadata: { finalizers: [...(live?.metadata.finalizers ?? []), finalizer] } },
    "merge",
  );
  const logsBefore = manager.logs.length;
  await client.delete(Mapping.RootSync, systemNamespace, name);
  const deleting = await eventually(
    async () => {
      const sync = await getSync("RootSync", systemNamespace, name);
      return sync?.metadata.deletionTimestamp !== undefined ? sync : undefined;
    },
    { what: "the RootSync marked deleted" },
  );
  assert.ok(
    Number(deleting.metadata.generation) > Number(before.metadata.labels?.["configsync.gke.io/sync-generation"]),
    "marking it deleted bumped the generation",
  );
  // The manager's job for the deletion ran (it keeps the reconciler and asks it for a pass): nothing may have moved.
  await eventually(
    () =>
      Promise.resolve(
        manager.logs
          .slice(logsBefore)
          .some(
            (line) => line.includes('"manager job finished"') && line.includes(`RootSync/${systemNamespace}/${name}`),
          ),
      ),
    { what: "the manager's job for the deletion" },
  );
  const after = await getObject(Mapping.Deployment, systemNamespace, reconciler);
  assert.deepEqual(templateLabels(after), templateLabels(before));
  assert.equal(
    templateAnnotations(after)["driftless.dev/sync-spec-hash"],
    templateAnnotations(before)["driftless.dev/sync-spec-hash"],
  );
  // As the reconciler would once done: the sync goes.
  await client.patch(Mapping.RootSync, systemNamespace, name, { metadata: { finalizers: null } }, "merge");
});

for (const kind of ["RootSync", "RepoSync"] as const) {
  test(`a ${kind} whose reconciler Deployment a finalizer holds stays, Reconciling on it in Config Sync's words, with the reconciler's identity, until the Deployment is gone`, async (t) => {
    const manager = await startManager(t, { mode: "deployment" });
    const namespace = kind === "RootSync" ? systemNamespace : await createNamespace(t, "held");
    const name = kind === "RootSync" ? `held-${suffix()}` : "repo-sync";
    const reconciler = kind === "RootSync" ? `root-reconciler-${name}` : `ns-reconciler-${namespace}`;
    const binding =
      kind === "RootSync"
        ? { m: Mapping.ClusterRoleBinding, namespace: undefined, name: "configsync.gke.io:root-reconciler" }
        : { m: Mapping.RoleBinding, namespace, name: "configsync.gke.io:ns-reconciler" };
    await createSync(
      t,
      kind === "RootSync"
        ? rootSyncObject(name, manager.scope, git)
        : repoSyncObject(namespace, name, manager.scope, git),
    );
    await eventually(() => getObject(Mapping.Deployment, systemNamespace, reconciler), { what: "the Deployment" });
    const client = await admin();
    // As Config Sync's e2e test holds it: a finalizer of someone else's keeps the Deployment Terminating.
    const hold = "e2e.driftless.test/hold";
    await client.patch(Mapping.Deployment, systemNamespace, reconciler, { metadata: { finalizers: [hold] } }, "merge");
    const release = (): Promise<unknown> =>
      client.patch(Mapping.Deployment, systemNamespace, reconciler, { metadata: { finalizers: null } }, "merge");
    t.after(() => release().catch(() => undefined));

    await client.delete(kind === "RootSync" ? Mapping.RootSync : Mapping.RepoSync, namespace, name);
    const id = `${systemNamespace}/${reconciler}`;
    const waiting = await eventually(
      async () => {
        const sync = await getSync(kind, namespace, name);
        return conditionOf(sync, "Reconciling")?.reason === "Deployment" &&
          conditionOf(sync, "Reconciling")?.message?.startsWith("deleting")
          ? sync
          : undefined;
      },
      { what: "Reconciling on the Terminating Deployment" },
    );
    assert.deepEqual(
      [conditionOf(waiting, "Reconciling")?.status, conditionOf(waiting, "Reconciling")?.message],
      [
        "True",
        `deleting reconciler deployment: Deployment (${id}) Terminating: failed to watch for deletion of Deployment: ${id}: timed out waiting for the condition`,
      ],
    );
    assert.ok(waiting?.metadata.finalizers?.includes("configsync.gke.io/reconciler-manager"));
    assert.ok(await getObject(Mapping.ServiceAccount, systemNamespace, reconciler), "the ServiceAccount went first");
    assert.ok(
      subjects(await getObject(binding.m, binding.namespace, binding.name)).includes(reconciler),
      "the binding went first",
    );

    await release();
    await eventually(async () => (await getSync(kind, namespace, name)) === undefined, {
      what: `the ${kind} deleted once its Deployment is gone`,
    });
    assert.equal(await getObject(Mapping.Deployment, systemNamespace, reconciler), undefined);
    assert.equal(await getObject(Mapping.ServiceAccount, systemNamespace, reconciler), undefined);
  });
}

test("a RootSync leaving the manager's selector while a finalizer holds its reconciler Deployment loses its identity and finalizer at once: no watch of this manager would bring it back", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const name = `left-${suffix()}`;
  const reconciler = `root-reconciler-${name}`;
  await createSync(t, rootSyncObject(name, manager.scope, git));
  await eventually(() => getObject(Mapping.Deployment, systemNamespace, reconciler), { what: "the Deployment" });
  const client = await admin();
  const hold = "e2e.driftless.test/hold";
  await client.patch(Mapping.Deployment, systemNamespace, reconciler, { metadata: { finalizers: [hold] } }, "merge");
  t.after(() =>
    client
      .patch(Mapping.Deployment, systemNamespace, reconciler, { metadata: { finalizers: null } }, "merge")
      .catch(() => undefined),
  );

  // A merge patch: the manager writes the sync meanwhile, so a replace of a copy read before may conflict.
  const live = await getSync("RootSync", systemNamespace, name);
  const unlabelled = Object.fromEntries(Object.keys(live?.metadata.labels ?? {}).map((key) => [key, null]));
  await client.patch(Mapping.RootSync, systemNamespace, name, { metadata: { labels: unlabelled } }, "merge");

  // The release removes the identity first, then the finalizer: wait for the last step, then read both.
  await eventually(
    async () => {
      const left = await getSync("RootSync", systemNamespace, name);
      return !(left?.metadata.finalizers?.includes("configsync.gke.io/reconciler-manager") ?? false);
    },
    { what: "the manager finalizer removed" },
  );
  assert.equal(await getObject(Mapping.ServiceAccount, systemNamespace, reconciler), undefined);
  assert.ok((await getObject(Mapping.Deployment, systemNamespace, reconciler))?.metadata.deletionTimestamp);
});
