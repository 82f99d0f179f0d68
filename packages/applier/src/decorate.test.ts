import { test } from "node:test";
import assert from "node:assert/strict";
import { comparisonCandidate, decorate, isManagementDisabled, stripManagement } from "./decorate.ts";
import type { RSync } from "@driftless/api";
import { Annotator, applyPatch, PatchMaker } from "@driftless/objectmatcher";
import { declaringSourceOf, gitContextValue, sourcePathFromRoot } from "./declaring-source.ts";
import { toDesired } from "./desired.ts";
import type { DesiredObject, JsonObject } from "./desired.ts";

const cm: DesiredObject = {
  id: { group: "", kind: "ConfigMap", namespace: "team", name: "settings" },
  apiVersion: "v1",
  object: {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings", namespace: "team", labels: { app: "x" } },
    data: { a: "1" },
  },
  sourcePath: "team/settings.yaml",
  sourceHash: "abc1234",
  dependsOn: [],
};

test("decorates a declared object with Config Sync's management label and annotations, leaving the declaration untouched", () => {
  const out = decorate(cm, { kind: "RepoSync", namespace: "team", name: "apps" });
  const meta = out["metadata"] as { labels: Record<string, string>; annotations: Record<string, string> };
  assert.equal(meta.labels["app.kubernetes.io/managed-by"], "configmanagement.gke.io");
  assert.equal(meta.labels["app"], "x");
  assert.equal(meta.annotations["configmanagement.gke.io/managed"], "enabled");
  assert.equal(meta.annotations["configsync.gke.io/manager"], "team_apps");
  assert.equal(meta.annotations["config.k8s.io/owning-inventory"], "team_apps");
  assert.equal(meta.annotations["configmanagement.gke.io/source-path"], "team/settings.yaml");
  assert.equal(meta.annotations["configsync.gke.io/resource-id"], "_configmap_team_settings");
  assert.equal((cm.object["metadata"] as { annotations?: unknown }).annotations, undefined, "the input was mutated");
});

test("an empty status, a null creationTimestamp and managedFields are not written, as Config Sync's applier drops them", () => {
  const copied: DesiredObject = {
    ...cm,
    object: {
      ...cm.object,
      metadata: { name: "settings", namespace: "team", creationTimestamp: null, managedFields: [] },
      status: {},
    },
  };
  const out = decorate(copied, { kind: "RepoSync", namespace: "team", name: "apps" });
  assert.equal("status" in out, false);
  const meta = out["metadata"] as JsonObject;
  assert.equal("creationTimestamp" in meta, false);
  assert.equal("managedFields" in meta, false);
  assert.deepEqual(copied.object["status"], {}, "the declaration is left as read");
});

test("strips only management metadata when an object leaves management", () => {
  const live = decorate(cm, { kind: "RootSync", namespace: "config-management-system", name: "root-sync" });
  (live["metadata"] as { annotations: Record<string, string> }).annotations["someone/else"] = "keep";
  (live["metadata"] as { annotations: Record<string, string> }).annotations["driftless.dev/last-applied"] = "x";
  const stripped = stripManagement(live, "driftless.dev/last-applied");
  assert.ok(stripped !== undefined);
  const meta = stripped["metadata"] as { labels: Record<string, string>; annotations: Record<string, string> };
  assert.deepEqual(meta.annotations, { "someone/else": "keep" });
  assert.deepEqual(meta.labels, { app: "x" });
  assert.equal(
    stripManagement(stripped, "driftless.dev/last-applied"),
    undefined,
    "nothing left to strip must mean no write",
  );
});

test("recognises configmanagement.gke.io/managed: disabled in a declaration", () => {
  assert.equal(isManagementDisabled(cm.object), false);
  assert.equal(
    isManagementDisabled({ metadata: { annotations: { "configmanagement.gke.io/managed": "disabled" } } }),
    true,
  );
});

test("the comparison candidate carries the live object's commit token, so a new commit alone is no change", () => {
  const decorated = decorate(cm, { kind: "RepoSync", namespace: "team", name: "apps" });
  const token = (o: Record<string, unknown>): string | undefined =>
    (o["metadata"] as { annotations: Record<string, string> }).annotations["configmanagement.gke.io/token"];
  assert.equal(token(comparisonCandidate(decorated, { "configmanagement.gke.io/token": "old" }, "new")), "old");
  assert.equal(token(comparisonCandidate(decorated, {}, "new")), "new");
  assert.equal(token(comparisonCandidate(decorated, {})), undefined);
  assert.equal(token(decorated), undefined, "the decorated declaration was mutated");
});

test("toDesired gives cluster-scoped ids and dependencies the empty namespace", () => {
  const desired = toDesired({
    id: { group: "", kind: "Namespace", name: "team" },
    apiVersion: "v1",
    raw: { apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } },
    sourcePath: "ns.yaml",
    sourceHash: "h",
    dependsOn: [{ group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", name: "widgets.example.com" }],
  });
  assert.deepEqual(desired.id, { group: "", kind: "Namespace", namespace: "", name: "team" });
  assert.deepEqual(desired.dependsOn, [
    { group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", namespace: "", name: "widgets.example.com" },
  ]);
});

test("decorates with Config Sync's ApplySet part-of and declared-version labels, and the source's path from the repository root and git context", () => {
  const source = {
    dir: "clusters/prod",
    gitContext: gitContextValue({ repo: "https://git.example/a.git", branch: "main", rev: "HEAD" }),
  };
  const out = decorate(
    { ...cm, apiVersion: "v1", source },
    { kind: "RootSync", namespace: "config-management-system", name: "root-sync" },
  );
  const meta = out["metadata"] as { labels: Record<string, string>; annotations: Record<string, string> };
  // kubectl's ApplySet id for RootSync config-management-system/root-sync (computed with Go's crypto/sha256).
  assert.equal(
    meta.labels["applyset.kubernetes.io/part-of"],
    "applyset-e22zDPwKdkFqCzUzScEvOv2nZZ55DLNRI-wrMTICH94-v1",
  );
  assert.equal(meta.labels["configsync.gke.io/declared-version"], "v1");
  assert.equal(meta.annotations["configmanagement.gke.io/source-path"], "clusters/prod/team/settings.yaml");
  assert.equal(
    meta.annotations["configsync.gke.io/git-context"],
    '{"repo":"https://git.example/a.git","branch":"main","rev":"HEAD"}',
  );
  const apps = decorate({ ...cm, apiVersion: "apps/v1" }, { kind: "RepoSync", namespace: "team", name: "repo-sync" });
  const appsLabels = (apps["metadata"] as { labels: Record<string, string> }).labels;
  assert.equal(appsLabels["configsync.gke.io/declared-version"], "v1");
  assert.equal(appsLabels["applyset.kubernetes.io/part-of"], "applyset-Z6mdqUhFpfqJASkDGrs62ek6kbvd5uQfnSr99ds5Mns-v1");
});

test("the declaring source of an RSync: the directory as Config Sync cleans it, and Config Sync's git-context JSON", () => {
  const sync = (git: Record<string, unknown>): RSync =>
    ({ kind: "RootSync", spec: { git: { auth: "none", ...git } } }) as unknown as RSync;
  assert.deepEqual(declaringSourceOf(sync({ repo: "https://h/r.git" })), {
    dir: ".",
    gitContext: '{"repo":"https://h/r.git","branch":"master","rev":"HEAD"}',
  });
  const nested = declaringSourceOf(sync({ repo: "https://u:secret@h/r.git?a=1&b=2", dir: "/a/b/", branch: "dev" }));
  assert.equal(nested.dir, "a/b");
  const at = (sourcePath: string) => ({ ...cm, sourcePath });
  assert.equal(sourcePathFromRoot(nested, at("c/d.yaml")), "a/b/c/d.yaml");
  assert.equal(sourcePathFromRoot(declaringSourceOf(sync({ repo: "r", dir: "/" })), at("x.yaml")), "x.yaml");
  assert.ok(!nested.gitContext.includes("secret"), "credentials written into an annotation");
  // Go's encoding/json escapes & < > in strings.
  assert.match(nested.gitContext, /\?a=1\\u0026b=2/);
});

test("a managed object leaves its sync's ApplySet when it leaves management", () => {
  const live = decorate(cm, { kind: "RootSync", namespace: "config-management-system", name: "root-sync" });
  const stripped = stripManagement(live, "driftless.dev/last-applied");
  const labels = (stripped?.["metadata"] as { labels: Record<string, string> }).labels;
  assert.equal(labels["applyset.kubernetes.io/part-of"], undefined);
  assert.equal(labels["configsync.gke.io/declared-version"], undefined);
});

test("toDesired keeps one DesiredObject per declaration and source, and a new one when the source changes", () => {
  const declared = {
    id: { group: "", kind: "ConfigMap", namespace: "a", name: "c" },
    apiVersion: "v1",
    raw: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "a" } },
    sourcePath: "c.yaml",
    sourceHash: "h",
    dependsOn: [],
  };
  const first = toDesired(declared, { dir: ".", gitContext: "{}" });
  assert.equal(toDesired(declared, { dir: ".", gitContext: "{}" }), first);
  assert.notEqual(toDesired(declared, { dir: "x", gitContext: "{}" }), first);
});

test("an object no file declares (an implicit Namespace) gets no source-path and no declared-version, as in Config Sync", () => {
  const implicit: DesiredObject = {
    id: { group: "", kind: "Namespace", namespace: "", name: "apps" },
    apiVersion: "v1",
    object: { apiVersion: "v1", kind: "Namespace", metadata: { name: "apps" } },
    sourcePath: "",
    sourceHash: "",
    dependsOn: [],
    source: { dir: "config", gitContext: "{}" },
  };
  const meta = decorate(implicit, { kind: "RootSync", namespace: "config-management-system", name: "root-sync" })[
    "metadata"
  ] as { labels: Record<string, string>; annotations: Record<string, string> };
  assert.equal(meta.annotations["configmanagement.gke.io/source-path"], undefined);
  assert.equal(meta.labels["configsync.gke.io/declared-version"], undefined);
  assert.equal(meta.annotations["configsync.gke.io/git-context"], "{}");
});

test("a rendered directory's objects are at the paths kustomize build --output writes them to, as Config Sync reads them", () => {
  const root = {
    kind: "RootSync",
    spec: { git: { auth: "none", repo: "r", dir: "overlays/prod" } },
  } as unknown as RSync;
  const deployment = {
    id: { group: "apps", kind: "Deployment", namespace: "web", name: "Front" },
    apiVersion: "apps/v1",
    sourcePath: "rendered.yaml",
  };
  const namespace = {
    id: { group: "", kind: "Namespace", name: "web" },
    apiVersion: "v1",
    sourcePath: "rendered.yaml",
  };
  const oneNamespace = declaringSourceOf(root, [deployment, namespace]);
  assert.equal(sourcePathFromRoot(oneNamespace, deployment), "overlays/prod/apps_v1_deployment_front.yaml");
  assert.equal(sourcePathFromRoot(oneNamespace, namespace), "overlays/prod/v1_namespace_web.yaml");
  const other = { ...deployment, id: { ...deployment.id, namespace: "api" } };
  const twoNamespaces = declaringSourceOf(root, [deployment, other, namespace]);
  assert.equal(sourcePathFromRoot(twoNamespaces, deployment), "overlays/prod/web_apps_v1_deployment_front.yaml");
  assert.equal(sourcePathFromRoot(twoNamespaces, namespace), "overlays/prod/v1_namespace_web.yaml");
});

const detachKey = "client.lifecycle.config.k8s.io/deletion";
const root = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;

/** A Namespace as driftless wrote it from `declared`: decorated, with its last-applied record. */
function appliedNamespace(annotator: Annotator, annotations: Record<string, string>): JsonObject {
  const declared: DesiredObject = {
    id: { group: "", kind: "Namespace", namespace: "", name: "foo" },
    apiVersion: "v1",
    object: { apiVersion: "v1", kind: "Namespace", metadata: { name: "foo", annotations } },
    sourcePath: "",
    sourceHash: "",
    dependsOn: [],
  };
  const written = decorate(declared, root);
  annotator.setLastAppliedAnnotation(written);
  return written;
}

function withAnnotations(object: JsonObject, extra: Record<string, string>): JsonObject {
  const meta = object["metadata"] as { annotations?: Record<string, string> };
  return { ...object, metadata: { ...meta, annotations: { ...meta.annotations, ...extra } } };
}

test("a released object keeps a record of only the deletion: detach driftless applied, so a later declaration without it removes it", () => {
  const annotator = new Annotator();
  const implicit = appliedNamespace(annotator, { [detachKey]: "detach" });
  const released = stripManagement(withAnnotations(implicit, { "someone/else": "keep" }), annotator.annotationKey);
  assert.ok(released !== undefined);
  const annotations = (released["metadata"] as { annotations: Record<string, string> }).annotations;
  assert.deepEqual(Object.keys(annotations).sort(), [annotator.annotationKey, detachKey, "someone/else"].sort());
  assert.deepEqual(annotator.getOriginalConfiguration(released), {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { annotations: { [detachKey]: "detach" }, name: "foo" },
  });
  assert.equal(stripManagement(released, annotator.annotationKey), undefined, "a second release must not write");

  // Declared in Git later, without detach: the three-way match removes it and keeps the other annotation.
  const declared = decorate(
    {
      id: { group: "", kind: "Namespace", namespace: "", name: "foo" },
      apiVersion: "v1",
      object: { apiVersion: "v1", kind: "Namespace", metadata: { name: "foo" } },
      sourcePath: "foo.yaml",
      sourceHash: "h",
      dependsOn: [],
    },
    root,
  );
  const adopted = applyPatch(released, new PatchMaker(annotator).calculate(released, declared));
  const after = (adopted["metadata"] as { annotations: Record<string, string> }).annotations;
  assert.equal(after[detachKey], undefined, "the detach driftless applied survived the declaration without it");
  assert.equal(after["someone/else"], "keep");
});

test("a released object whose deletion: detach driftless never applied (added by hand) keeps no record, and the annotation", () => {
  const annotator = new Annotator();
  const byHand = withAnnotations(appliedNamespace(annotator, {}), { [detachKey]: "detach" });
  const released = stripManagement(byHand, annotator.annotationKey);
  const annotations = (released?.["metadata"] as { annotations: Record<string, string> }).annotations;
  assert.deepEqual(annotations, { [detachKey]: "detach" });
  // Applied with detach, then changed by hand to something else: nothing of driftless's is left to record.
  const changed = withAnnotations(appliedNamespace(annotator, { [detachKey]: "detach" }), { [detachKey]: "keep" });
  const releasedChanged = stripManagement(changed, annotator.annotationKey);
  assert.deepEqual((releasedChanged?.["metadata"] as { annotations: Record<string, string> }).annotations, {
    [detachKey]: "keep",
  });
});
