/**
 * The metadata driftless writes on managed objects and on the RSync is Config Sync's: source-path
 * from the repository root, git-context, declared-version, and the ApplySet labels (members and
 * parent), so tools that read Config Sync's objects, and kubectl's ApplySet label queries, read
 * driftless's. The token is the commit an object was last written at: a commit that does not touch
 * an object does not rewrite it, and a resync writes nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
  removeAfter,
} from "../../support/index.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

test("managed objects carry Config Sync's source-path, git-context, declared-version and ApplySet labels, and the RootSync is the ApplySet's parent", async (t) => {
  const namespace = await testNamespace(t, "meta");
  const sync = `meta-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/apps/settings.yaml",
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings", namespace },
      data: { a: "1" },
    }),
  );
  await repo.write(
    "config/rbac.yaml",
    JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "reader", namespace },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
    }),
  );
  const commit = await repo.commit("two objects");
  await createRootSync(sync, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: sync });
  await rootSynced(sync, commit);

  // kubectl's ApplySet id (KEP-3659 v1) of the RootSync.
  const digest = createHash("sha256").update(`${sync}.${rootSyncNamespace}.RootSync.configsync.gke.io`).digest();
  const id = `applyset-${digest.toString("base64url")}-v1`;
  const cm = await coreApi().readNamespacedConfigMap({ namespace, name: "settings" });
  assert.equal(cm.metadata?.labels?.["applyset.kubernetes.io/part-of"], id);
  assert.equal(cm.metadata?.labels?.["configsync.gke.io/declared-version"], "v1");
  assert.equal(cm.metadata?.annotations?.["configmanagement.gke.io/source-path"], "config/apps/settings.yaml");
  assert.equal(
    cm.metadata?.annotations?.["configsync.gke.io/git-context"],
    JSON.stringify({ repo: repo.url, branch: repo.branch, rev: "HEAD" }),
  );
  assert.equal(cm.metadata?.annotations?.["configmanagement.gke.io/token"], commit);

  // The parent: labelled with the set's id and Config Sync's tooling, as `kubectl` ApplySet tooling expects.
  const parent = await eventually(
    async () => {
      const rs = (await customApi().getNamespacedCustomObject({ ...rootSyncs, name: sync })) as JsonObject;
      const meta = rs["metadata"] as { labels?: Record<string, string>; annotations?: Record<string, string> };
      return meta.labels?.["applyset.kubernetes.io/id"] === id ? meta : undefined;
    },
    { what: "the RootSync's ApplySet id label" },
  );
  assert.equal(parent.annotations?.["applyset.kubernetes.io/tooling"], "configsync.gke.io/v1");

  // A label query on the id finds the set's members, as `kubectl get -l applyset.kubernetes.io/part-of=<id>` does.
  const members = await coreApi().listNamespacedConfigMap({
    namespace,
    labelSelector: `applyset.kubernetes.io/part-of=${id}`,
  });
  assert.deepEqual(
    members.items.map((item) => item.metadata?.name),
    ["settings"],
  );
});

test("a commit that leaves an object alone does not rewrite it (its token stays), and resyncs write nothing", async (t) => {
  const namespace = await testNamespace(t, "meta-token");
  const sync = `meta-${suffix()}`;
  const repo = await TestRepo.create(t);
  const configMap = (name: string, value: string): string =>
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { value } });
  await repo.write("config/still.yaml", configMap("still", "1"));
  await repo.write("config/moving.yaml", configMap("moving", "1"));
  const first = await repo.commit("both");
  await createRootSync(sync, repo);
  // resyncPeriodMs 0: every poll is a full pass (read, plan, three-way match of every object).
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name: sync },
    { resyncPeriodMs: 0 },
  );
  await rootSynced(sync, first);
  const still = await coreApi().readNamespacedConfigMap({ namespace, name: "still" });

  await repo.write("config/moving.yaml", configMap("moving", "2"));
  const second = await repo.commit("change one");
  await rootSynced(sync, second);
  const stillNow = await coreApi().readNamespacedConfigMap({ namespace, name: "still" });
  const moving = await coreApi().readNamespacedConfigMap({ namespace, name: "moving" });
  assert.equal(stillNow.metadata?.resourceVersion, still.metadata?.resourceVersion, "an untouched object was written");
  assert.equal(stillNow.metadata?.annotations?.["configmanagement.gke.io/token"], first);
  assert.equal(moving.metadata?.annotations?.["configmanagement.gke.io/token"], second);

  // Idle: once the commit's trailing status writes settle, full passes write nothing.
  const settled = reconciler.passCount;
  await eventually(() => reconciler.passCount >= settled + 1, { what: "one more pass" });
  const writesBefore = reconciler.client.requests.writes();
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 3, { what: "three more passes" });
  assert.equal(reconciler.client.requests.writes() - writesBefore, 0, "an unchanged pass wrote to the API server");
});

test("a rendered directory's objects carry the source-path of the file kustomize build --output writes each to, as Config Sync reads them", async (t) => {
  const renderToolsDir = buildRenderTools();
  const sync = `meta-${suffix()}`;
  const namespaces = [`meta-a-${suffix()}`, `meta-b-${suffix()}`];
  t.after(() =>
    Promise.all(
      namespaces.map((name) =>
        coreApi()
          .deleteNamespace({ name })
          .catch(() => undefined),
      ),
    ),
  );
  const repo = await TestRepo.create(t);
  const resources = namespaces.flatMap((namespace) => [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings-x", namespace }, data: { a: "1" } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "reader", namespace },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
    },
  ]);
  await repo.write("config/all.yaml", resources.map((r) => JSON.stringify(r)).join("\n---\n"));
  await repo.write("config/kustomization.yaml", JSON.stringify({ resources: ["all.yaml"] }));
  const commit = await repo.commit("a kustomization over two namespaces");
  await createRootSync(sync, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: sync }, { renderToolsDir });
  await rootSynced(sync, commit);

  // The oracle: the real kustomize writing one file per object, the folder Config Sync's reconciler reads.
  const out = await mkdtemp(join(tmpdir(), "driftless-kustomize-out-"));
  removeAfter(t, out);
  execFileSync(join(renderToolsDir, "kustomize"), ["build", join(repo.work, "config"), "--output", out]);
  const expected = new Map<string, string>();
  for (const file of await readdir(out)) {
    const text = await readFile(join(out, file), "utf8");
    const kind = /^kind: (.+)$/m.exec(text)?.[1];
    const name = /^ {2}name: (.+)$/m.exec(text)?.[1];
    const namespace = /^ {2}namespace: (.+)$/m.exec(text)?.[1] ?? "";
    expected.set(`${kind}/${namespace}/${name}`, `config/${file}`);
  }
  assert.equal(expected.size, resources.length);
  for (const namespace of namespaces) {
    const cm = await coreApi().readNamespacedConfigMap({ namespace, name: "settings-x" });
    assert.equal(
      cm.metadata?.annotations?.["configmanagement.gke.io/source-path"],
      expected.get(`ConfigMap/${namespace}/settings-x`),
    );
    const ns = await coreApi().readNamespace({ name: namespace });
    assert.equal(
      ns.metadata?.annotations?.["configmanagement.gke.io/source-path"],
      expected.get(`Namespace//${namespace}`),
    );
  }
});

test("objects declared in files carry configmanagement.gke.io/cluster-name when the cluster has a name, as Config Sync writes it; an implicit Namespace does not", async (t) => {
  const namespace = `cname-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .then(
        () => undefined,
        () => undefined,
      ),
  );
  const sync = `cname-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/settings.yaml",
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings", namespace },
      data: { a: "1" },
    }),
  );
  const commit = await repo.commit("one object in an undeclared namespace");
  await createRootSync(sync, repo);
  const clusterName = `east-${suffix()}`;
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: sync }, { clusterName });
  await rootSynced(sync, commit);

  const cm = await coreApi().readNamespacedConfigMap({ namespace, name: "settings" });
  assert.equal(cm.metadata?.annotations?.["configmanagement.gke.io/cluster-name"], clusterName);
  const ns = await coreApi().readNamespace({ name: namespace });
  assert.equal(ns.metadata?.annotations?.["configmanagement.gke.io/cluster-name"], undefined);
});
