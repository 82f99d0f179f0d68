/**
 * The RBAC in manifests/ is sufficient (every other test runs the manager with it) and not wider
 * than needed: what the manager and a RepoSync's reconciler may do, asked of the API server's own
 * authorizer (SubjectAccessReview).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import type { KubeObject } from "@driftless/kube";
import { findRepoRoot } from "@driftless/local-cluster";
import { TestRepo } from "../../support/index.ts";
import {
  admin,
  mappingOf,
  configMap,
  createNamespace,
  createSync,
  managerKubeconfig,
  repoSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

interface Attributes {
  readonly verb: string;
  readonly resource: string;
  readonly group?: string;
  readonly namespace?: string;
  readonly subresource?: string;
}

async function allowed(serviceAccount: string, attributes: Attributes): Promise<boolean> {
  const client = await admin();
  const review = await client.request<{ status?: { allowed?: boolean } }>({
    method: "POST",
    path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: `system:serviceaccount:${systemNamespace}:${serviceAccount}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${systemNamespace}`, "system:authenticated"],
        resourceAttributes: { group: "", ...attributes },
      },
    },
  });
  return review.status?.allowed === true;
}

test("the manager's ServiceAccount may manage reconcilers but read no Secrets and touch no synced objects", async () => {
  await managerKubeconfig(); // applies manifests/
  const manager = "reconciler-manager";
  const may: Attributes[] = [
    { verb: "watch", resource: "reposyncs", group: "configsync.gke.io" },
    { verb: "update", resource: "rootsyncs", group: "configsync.gke.io", namespace: systemNamespace },
    { verb: "update", resource: "reposyncs", subresource: "status", group: "configsync.gke.io", namespace: "any" },
    { verb: "create", resource: "deployments", group: "apps", namespace: systemNamespace },
    { verb: "create", resource: "serviceaccounts", subresource: "token", namespace: systemNamespace },
    { verb: "create", resource: "rolebindings", group: "rbac.authorization.k8s.io", namespace: "team-a" },
    { verb: "update", resource: "leases", group: "coordination.k8s.io", namespace: systemNamespace },
  ];
  const mayNot: Attributes[] = [
    { verb: "get", resource: "secrets", namespace: systemNamespace },
    { verb: "list", resource: "secrets" },
    { verb: "create", resource: "configmaps", namespace: "team-a" },
    { verb: "delete", resource: "namespaces" },
    { verb: "create", resource: "deployments", group: "apps", namespace: "team-a" },
    { verb: "create", resource: "serviceaccounts", subresource: "token", namespace: "team-a" },
    { verb: "create", resource: "serviceaccounts", namespace: "team-a" },
    { verb: "create", resource: "clusterroles", group: "rbac.authorization.k8s.io" },
    { verb: "escalate", resource: "clusterroles", group: "rbac.authorization.k8s.io" },
    { verb: "delete", resource: "customresourcedefinitions", group: "apiextensions.k8s.io" },
  ];
  for (const a of may)
    assert.equal(
      await allowed(manager, a),
      true,
      `the manager may not ${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ""} in ${a.namespace ?? "the cluster"}`,
    );
  for (const a of mayNot)
    assert.equal(
      await allowed(manager, a),
      false,
      `the manager may ${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ""} in ${a.namespace ?? "the cluster"}`,
    );
});

test("a RepoSync's reconciler may act in its namespace and nowhere else", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "scoped");
  const elsewhere = await createNamespace(t, "elsewhere");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("v1"));
  const reconciler = `ns-reconciler-${namespace}`;
  assert.equal(await allowed(reconciler, { verb: "create", resource: "configmaps", namespace }), true);
  assert.equal(
    await allowed(reconciler, {
      verb: "update",
      resource: "reposyncs",
      subresource: "status",
      group: "configsync.gke.io",
      namespace,
    }),
    true,
  );
  assert.equal(
    await allowed(reconciler, { verb: "get", resource: "secrets", namespace }),
    true,
    "it reads its own Secrets (git credentials)",
  );
  for (const a of [
    { verb: "create", resource: "configmaps", namespace: elsewhere },
    { verb: "get", resource: "secrets", namespace: elsewhere },
    { verb: "update", resource: "reposyncs", group: "configsync.gke.io", namespace: elsewhere },
    { verb: "create", resource: "namespaces" },
    { verb: "create", resource: "clusterrolebindings", group: "rbac.authorization.k8s.io" },
    { verb: "get", resource: "secrets", namespace: systemNamespace },
  ] satisfies Attributes[]) {
    assert.equal(
      await allowed(reconciler, a),
      false,
      `${reconciler} may ${a.verb} ${a.resource} in ${a.namespace ?? "the cluster"}`,
    );
  }
});

test("every file of manifests/kustomization.yaml is accepted by the API server (server-side dry run)", async () => {
  await managerKubeconfig(); // the namespace must exist for namespaced dry runs
  const dir = join(findRepoRoot(), "manifests");
  const kustomization = parse(await readFile(join(dir, "kustomization.yaml"), "utf8")) as { resources: string[] };
  const client = await admin();
  const kinds: string[] = [];
  for (const file of kustomization.resources) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), "utf8"))) {
      const obj = doc.toJS() as KubeObject;
      const m = await mappingOf(obj.apiVersion, obj.kind);
      await client.patch(m, m.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name, obj, "apply", {
        fieldManager: "driftless-tests",
        force: true,
        dryRun: true,
        fieldValidation: "Strict",
      });
      kinds.push(obj.kind);
    }
  }
  for (const kind of [
    "CustomResourceDefinition",
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "Role",
    "Deployment",
    "Service",
  ]) {
    assert.ok(kinds.includes(kind), `manifests/ has no ${kind}`);
  }
});
