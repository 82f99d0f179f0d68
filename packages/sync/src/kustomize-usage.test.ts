import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { stringify } from "yaml";
import { isGitRepoSpec } from "./git-repo-spec.ts";
import { kustomizeUsage } from "./kustomize-usage.ts";
import { countDocuments } from "./rendered-objects.ts";

async function tree(t: TestContext, files: Record<string, unknown>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "driftless-kustomize-usage-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), typeof content === "string" ? content : stringify(content));
  }
  return root;
}

const target = (kind: string) => ({ select: { kind }, fieldPaths: ["metadata.annotations.x"] });

test("counts Config Sync's kustomize metrics across bases, components, patches, helm charts, generators and remote bases", async (t) => {
  const repo = await tree(t, {
    "config/kustomization.yaml": {
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      namespace: "shop",
      namePrefix: "p-",
      labels: [{ pairs: { a: "1", b: "2" } }, { pairs: { c: "3" } }, { includeSelectors: true }],
      resources: [
        "../base",
        "../overlay-a",
        "cm.yaml",
        "https://github.com/example/repo//deploy?ref=v1",
        "git@github.com:example/other.git/app",
      ],
      components: ["../component"],
      patches: [{ path: "patch.yaml" }, { patch: "- op: add\n  path: /x\n  value: 1" }],
      patchesStrategicMerge: ["smp.yaml"],
      helmCharts: [{ name: "web", repo: "https://charts.example" }, { name: "db" }],
      configMapGenerator: [{ name: "settings", literals: ["a=b"] }],
      secretGenerator: [{ name: "creds", literals: ["a=b"] }],
      images: [{ name: "nginx", newTag: "1.27" }],
      replicas: [{ name: "web", count: 2 }],
      replacements: [
        { source: { kind: "ConfigMap", name: "settings" }, targets: [target("Deployment"), target("StatefulSet")] },
        { path: "replacement.yaml" },
        { path: "replacements-list.yaml" },
      ],
    },
    "config/cm.yaml": { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } },
    // A file of one replacement counts its targets; a list of them Config Sync does not decode.
    "config/replacement.yaml": {
      source: { kind: "ConfigMap", name: "settings" },
      targets: [target("A"), target("B"), target("C")],
    },
    "config/replacements-list.yaml": [{ source: { kind: "ConfigMap", name: "x" }, targets: [target("D")] }],
    // Reached twice (from the root and from overlay-a): counted twice.
    "base/kustomization.yaml": {
      resources: ["deployment.yaml"],
      namePrefix: "base-",
      commonAnnotations: { owner: "team", tier: "web" },
      patchesJson6902: [{ target: { kind: "Deployment", name: "web" }, path: "json-patch.yaml" }],
      images: [{ name: "redis" }],
      vars: [{ name: "X", objref: { kind: "Service", name: "web", apiVersion: "v1" } }],
      crds: ["crd.yaml"],
    },
    "overlay-a/kustomization.yaml": {
      bases: ["../base"],
      nameSuffix: "-a",
      commonLabels: { env: "a", tier: "x" },
      helmChartInflationGenerator: [{ chartName: "legacy", chartRepoUrl: "https://charts.example" }],
      transformers: ["transformer.yaml"],
      generators: ["generator.yaml"],
      validators: ["validator.yaml"],
    },
    "component/kustomization.yaml": {
      apiVersion: "kustomize.config.k8s.io/v1alpha1",
      kind: "Component",
      patches: [{ path: "p.yaml" }],
      resources: ["extra.yaml"],
    },
  });
  const usage = await kustomizeUsage(join(repo, "config"), repo);
  assert.deepEqual(usage, {
    fields: {
      // The root as Config Sync reads it after `kustomize edit add buildmetadata originAnnotations`.
      TypeMeta: 2,
      BuildMetadata: 1,
      Namespace: 1,
      NamePrefix: 3,
      Labels: 1,
      Resources: 4,
      Components: 1,
      Patches: 2,
      PatchesStrategicMerge: 1,
      HelmCharts: 1,
      ConfigMapGenerator: 1,
      SecretGenerator: 1,
      Images: 3,
      Replicas: 1,
      Replacements: 1,
      CommonAnnotations: 2,
      PatchesJson6902: 2,
      Vars: 2,
      Crds: 2,
      Bases: 1,
      NameSuffix: 1,
      CommonLabels: 1,
      HelmChartInflationGenerator: 1,
      Transformers: 1,
      Generators: 1,
      Validators: 1,
    },
    topTier: {
      Resources: 8,
      SecretGenerators: 1,
      ConfigMapGenerators: 1,
      Transformers: 1,
      Generators: 1,
      Validators: 1,
    },
    patches: { Patches: 3, PatchesStrategicMerge: 1, PatchesJson6902: 2 },
    // Local: the root's two directory resources (not its component, not its file) and overlay-a's base.
    bases: { Local: 3, Remote: 2 },
    helmInflators: { HelmCharts: 2, HelmChartInflationGenerator: 1 },
    metadataTransformers: {
      NamePrefix: 3,
      Namespace: 1,
      Labels: 3,
      CommonAnnotations: 4,
      NameSuffix: 1,
      CommonLabels: 2,
    },
    simplification: { Images: 3, Replicas: 1, ReplacementSources: 3, ReplacementTargets: 5 },
    deprecatingFields: { Vars: 2, Crds: 2, Bases: 1 },
  });
});

const legacy = {
  bases: ["../b"],
  resources: [],
  imageTags: [{ name: "nginx" }],
  helmChartInflationGenerator: [{ chartName: "c", chartHome: "charts" }],
};

test("reads the sync directory's kustomization as kustomize's edit leaves it: kind, buildMetadata, deprecated fields moved", async (t) => {
  const repo = await tree(t, {
    "root/kustomization.yaml": legacy,
    "b/kustomization.yaml": { ...legacy, bases: [] },
  });
  const usage = await kustomizeUsage(join(repo, "root"), repo);
  assert.ok(usage !== undefined);
  // The root: bases moved into resources (the empty list dropped), imageTags into images, the old
  // generator into helmCharts with helmGlobals; a base is read as written (an empty list is set).
  assert.deepEqual(usage.fields, {
    TypeMeta: 1,
    BuildMetadata: 1,
    Resources: 2,
    Images: 1,
    HelmCharts: 1,
    HelmGlobals: 1,
    Bases: 1,
    ImageTags: 1,
    HelmChartInflationGenerator: 1,
  });
  assert.deepEqual(usage.deprecatingFields, {});
  assert.deepEqual(usage.bases, { Local: 1 });
  assert.deepEqual(usage.helmInflators, { HelmCharts: 1, HelmChartInflationGenerator: 1 });
});

test("leaves the root as written when it asks for origin annotations already, or kustomize's edit would refuse it", async (t) => {
  const repo = await tree(t, {
    "asks/kustomization.yaml": { ...legacy, buildMetadata: ["originAnnotations"] },
    "unknown/kustomization.yaml": { ...legacy, notAField: true },
    "b/kustomization.yaml": {},
  });
  for (const dir of ["asks", "unknown"]) {
    const usage = await kustomizeUsage(join(repo, dir), repo);
    assert.ok(usage !== undefined);
    assert.equal(usage.fields.TypeMeta, undefined, dir);
    assert.deepEqual(usage.deprecatingFields, { Bases: 1 }, dir);
    assert.deepEqual(usage.helmInflators, { HelmChartInflationGenerator: 1 }, dir);
  }
});

test("counts nothing when a kustomization of the tree cannot be decoded, or the directory has none", async (t) => {
  const repo = await tree(t, {
    "root/kustomization.yaml": { resources: ["../bad"] },
    "bad/kustomization.yaml": "resources: not-a-list\n",
    "plain/cm.yaml": "kind: ConfigMap\n",
  });
  assert.equal(await kustomizeUsage(join(repo, "root"), repo), undefined);
  assert.equal(await kustomizeUsage(join(repo, "plain"), repo), undefined);
});

test("stops at a cycle, and reads no kustomization outside the repository", async (t) => {
  const outside = await tree(t, { "kustomization.yaml": { namePrefix: "secret-" } });
  const repo = await tree(t, {
    "a/kustomization.yaml": { resources: ["../b", "../escape"] },
    "b/kustomization.yaml": { resources: ["../a"] },
  });
  await symlink(outside, join(repo, "escape"));
  const usage = await kustomizeUsage(join(repo, "a"), repo);
  assert.ok(usage !== undefined);
  assert.deepEqual(usage.bases, { Local: 2 });
  assert.equal(usage.metadataTransformers.NamePrefix, undefined);
});

test("tells git repositories from local paths as kustomize's repospec does", () => {
  for (const remote of [
    "https://github.com/org/repo//base?ref=v1",
    "github.com/org/repo/base",
    "git@github.com:org/repo.git/base",
    "ssh://git@example.com/org/repo.git",
    "git::https://example.com/org/repo",
    "file:///srv/repos/app.git//base?ref=main",
    "https://dev.azure.com/org/project/_git/repo/path",
  ])
    assert.equal(isGitRepoSpec(remote), true, remote);
  for (const local of [
    "../base",
    "cm.yaml",
    "/abs/path",
    "https://example.com/only-a-file.yaml",
    "oci://registry/chart",
    "https://github.com/org/repo//../escape",
  ])
    assert.equal(isGitRepoSpec(local), false, local);
});

test("counts kustomize's output documents", () => {
  assert.equal(countDocuments(""), 0);
  assert.equal(countDocuments("a: 1\n"), 1);
  assert.equal(countDocuments("a: 1\n---\nb: 2\n---\n# only a comment\n---\nc: |\n  ---x\n"), 3);
});
