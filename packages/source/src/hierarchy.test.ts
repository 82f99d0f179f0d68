import assert from "node:assert/strict";
import { symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { SourceFormat } from "@driftless/api";
import { builtinKinds } from "./builtin-kinds.ts";
import { readSource } from "./read-source.ts";
import type { SourceResult } from "./result.ts";
import { configMap, fakeDiscovery, withTree } from "./testing.ts";

const repo = `apiVersion: configmanagement.gke.io/v1
kind: Repo
metadata: {name: repo}
spec: {version: "1.0.0"}
`;
const ns = (name: string, labels = ""): string =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n${labels ? `  labels: {${labels}}\n` : ""}`;
const clusterRole = (name: string, namespace = ""): string =>
  `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ""}rules: []\n`;
const hierarchyConfig = (resources: string): string =>
  `apiVersion: configmanagement.gke.io/v1\nkind: HierarchyConfig\nmetadata: {name: config}\nspec:\n  resources:\n${resources}`;
const namespaceSelector = `apiVersion: configmanagement.gke.io/v1
kind: NamespaceSelector
metadata: {name: sandboxes}
spec: {selector: {matchLabels: {sandbox: "true"}}}
`;

async function hierarchy(files: Readonly<Record<string, string>>, withRepo = true): Promise<SourceResult> {
  const tree = withRepo ? { "system/repo.yaml": repo, ...files } : files;
  return withTree(tree, (dir) =>
    readSource(dir, { scope: { kind: "RootSync" }, kinds: fakeDiscovery(), format: SourceFormat.Hierarchy }),
  );
}

/** [code, first path] of each error, in order. */
function errorsOf(result: SourceResult): [string, string][] {
  assert.ok(!result.complete, "expected the source to fail");
  return result.errors.map((e) => [e.code, e.sourcePaths[0] ?? ""]);
}

function declared(result: SourceResult): string[] {
  assert.ok(result.complete, result.errors.map((e) => `${e.code} ${e.message}`).join("\n"));
  return result.objects.map(
    (o) => `${o.kind} ${o.id.namespace ? `${o.id.namespace}/` : ""}${o.id.name} <- ${o.sourcePath}`,
  );
}

void describe("hierarchy: what is read and where objects land", () => {
  void it("reads only system/, cluster/, clusterregistry/ and namespaces/; files elsewhere are ignored", async () => {
    const result = await hierarchy({
      "top.yaml": configMap("at-root", "default"),
      "docs/cm.yaml": configMap("elsewhere", "default"),
      "namespaces/web/namespace.yaml": ns("web"),
    });
    assert.deepEqual(declared(result), ["Namespace web <- namespaces/web/namespace.yaml"]);
    assert.equal(result.fileCount, 2);
  });

  void it("ignores Kptfiles anywhere, so a Namespace directory's subdirectory holding only one is no KNV1003 (Config Sync's e2e TestIgnoreKptfiles)", async () => {
    const result = await hierarchy({
      "cluster/Kptfile": "random content",
      "namespaces/foo/Kptfile": "",
      "namespaces/foo/subdir/Kptfile": "# some comment",
      "namespaces/foo/ns.yaml": ns("foo"),
    });
    assert.deepEqual(declared(result), ["Namespace foo <- namespaces/foo/ns.yaml"]);
  });

  void it("places a symlinked file where its target is, as Config Sync reads the resolved path", async () => {
    const tree = {
      "system/repo.yaml": repo,
      "shared/cm.yaml": configMap("shared"),
      "namespaces/web/namespace.yaml": ns("web"),
      "namespaces/web/quota.yaml": configMap("quota"),
      "namespaces/api/namespace.yaml": ns("api"),
    };
    const read = (dir: string): Promise<SourceResult> =>
      readSource(dir, { scope: { kind: "RootSync" }, kinds: fakeDiscovery(), format: SourceFormat.Hierarchy });
    // A link from namespaces/ to a file outside the four top-level directories declares nothing.
    const outside = await withTree(tree, async (dir) => {
      await symlink("../../shared/cm.yaml", join(dir, "namespaces", "web", "shared.yaml"));
      return read(dir);
    });
    assert.deepEqual(declared(outside), [
      "Namespace api <- namespaces/api/namespace.yaml",
      "Namespace web <- namespaces/web/namespace.yaml",
      "ConfigMap web/quota <- namespaces/web/quota.yaml",
    ]);
    // A link in api/ to web's file reads web's file a second time: a duplicate, not a copy in api.
    const shared = await withTree(tree, async (dir) => {
      await symlink("../web/quota.yaml", join(dir, "namespaces", "api", "quota.yaml"));
      return read(dir);
    });
    assert.deepEqual(errorsOf(shared), [["KNV1029", "namespaces/web/quota.yaml"]]);
  });

  void it("puts an object of a namespace directory in that namespace, and copies abstract directories' objects into every namespace below", async () => {
    const result = await hierarchy({
      "cluster/reader.yaml": clusterRole("reader"),
      "namespaces/everywhere.yaml": configMap("everywhere"),
      "namespaces/eng/eng-only.yaml": configMap("eng-only"),
      "namespaces/eng/web/namespace.yaml": ns("web"),
      "namespaces/eng/web/own.yaml": configMap("own", "web"),
      "namespaces/eng/deep/er/api/namespace.yaml": ns("api"),
      "namespaces/ops/namespace.yaml": ns("ops"),
    });
    assert.deepEqual(declared(result), [
      "ClusterRole reader <- cluster/reader.yaml",
      "Namespace api <- namespaces/eng/deep/er/api/namespace.yaml",
      "ConfigMap api/everywhere <- namespaces/everywhere.yaml",
      "ConfigMap api/eng-only <- namespaces/eng/eng-only.yaml",
      "Namespace web <- namespaces/eng/web/namespace.yaml",
      "ConfigMap web/own <- namespaces/eng/web/own.yaml",
      "ConfigMap web/everywhere <- namespaces/everywhere.yaml",
      "ConfigMap web/eng-only <- namespaces/eng/eng-only.yaml",
      "Namespace ops <- namespaces/ops/namespace.yaml",
      "ConfigMap ops/everywhere <- namespaces/everywhere.yaml",
    ]);
    assert.ok(result.complete);
    const inherited = result.objects.find((o) => o.id.namespace === "api" && o.id.name === "everywhere");
    assert.deepEqual(inherited?.raw["metadata"], { name: "everywhere", namespace: "api" });
  });

  void it("labels each Namespace with its directories' depths and marks it managed for HNC, as Config Sync does", async () => {
    const result = await hierarchy({
      "namespaces/eng/web/namespace.yaml": ns("web", "team: web"),
      "namespaces/ops/namespace.yaml": `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ops\n  annotations: {hnc.x-k8s.io/managed-by: platform}\n`,
    });
    assert.ok(result.complete);
    const [web, ops] = result.objects;
    assert.deepEqual(web?.raw["metadata"], {
      name: "web",
      labels: { team: "web", "eng.tree.hnc.x-k8s.io/depth": "1", "web.tree.hnc.x-k8s.io/depth": "0" },
      annotations: { "hnc.x-k8s.io/managed-by": "configmanagement.gke.io" },
    });
    assert.deepEqual(ops?.metadata.annotations, {
      "hnc.x-k8s.io/managed-by": "configmanagement.gke.io",
      "configsync.gke.io/original-hnc-managed-by-value": "platform",
    });
  });

  void it("never applies Repo, HierarchyConfig, NamespaceSelector, Cluster or ClusterSelector, and never asks the cluster about them", async () => {
    const discovery = fakeDiscovery();
    const result = await withTree(
      {
        "system/repo.yaml": repo,
        "system/hc.yaml": hierarchyConfig("  - {group: rbac.authorization.k8s.io, kinds: [RoleBinding]}\n"),
        "clusterregistry/east.yaml":
          "apiVersion: clusterregistry.k8s.io/v1alpha1\nkind: Cluster\nmetadata: {name: east}\n",
        "clusterregistry/prod.yaml":
          "apiVersion: configmanagement.gke.io/v1\nkind: ClusterSelector\nmetadata: {name: prod}\nspec: {selector: {matchLabels: {env: prod}}}\n",
        "namespaces/selector.yaml": namespaceSelector,
        "namespaces/web/namespace.yaml": ns("web"),
      },
      (dir) => readSource(dir, { scope: { kind: "RootSync" }, kinds: discovery, format: SourceFormat.Hierarchy }),
    );
    assert.deepEqual(declared(result), ["Namespace web <- namespaces/web/namespace.yaml"]);
    assert.deepEqual(discovery.calls, ["v1/Namespace"]);
  });

  void it("reads a RepoSync's source as unstructured whatever the format says", async () => {
    const result = await withTree({ "anywhere/cm.yaml": configMap("cm") }, (dir) =>
      readSource(dir, {
        scope: { kind: "RepoSync", namespace: "team" },
        kinds: fakeDiscovery(),
        format: SourceFormat.Hierarchy,
      }),
    );
    assert.deepEqual(declared(result), ["ConfigMap team/cm <- anywhere/cm.yaml"]);
  });

  void it("refuses Repo and HierarchyConfig in an unstructured source (KNV1032)", async () => {
    const result = await withTree({ "system/repo.yaml": repo }, (dir) =>
      readSource(dir, { scope: { kind: "RootSync" }, kinds: fakeDiscovery() }),
    );
    assert.deepEqual(errorsOf(result), [["KNV1032", "system/repo.yaml"]]);
  });

  void it("offline, places kinds nobody defines by their top-level directory", async () => {
    const result = await withTree(
      {
        "system/repo.yaml": repo,
        "cluster/thing.yaml": "apiVersion: example.com/v1\nkind: ClusterThing\nmetadata: {name: t}\n",
        "namespaces/web/namespace.yaml": ns("web"),
        "namespaces/web/thing.yaml": "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\n",
      },
      (dir) =>
        readSource(dir, {
          scope: { kind: "RootSync" },
          kinds: builtinKinds,
          format: SourceFormat.Hierarchy,
          allowUnknownKinds: true,
        }),
    );
    assert.deepEqual(declared(result), [
      "ClusterThing t <- cluster/thing.yaml",
      "Namespace web <- namespaces/web/namespace.yaml",
      "Thing web/t <- namespaces/web/thing.yaml",
    ]);
  });
});

void describe("hierarchy: errors, with Config Sync's codes and the files they concern", () => {
  const cases: [string, Record<string, string>, [string, string][], boolean?][] = [
    [
      "a Namespace directory with a subdirectory (KNV1003)",
      { "namespaces/team/namespace.yaml": ns("team"), "namespaces/team/sub/namespace.yaml": ns("sub") },
      [["KNV1003", "namespaces/team/sub"]],
    ],
    [
      "a kind the HierarchyConfig sets to none in an abstract directory (KNV1007)",
      {
        "system/hc.yaml": hierarchyConfig('  - {group: "", kinds: [ConfigMap], hierarchyMode: none}\n'),
        "namespaces/eng/cm.yaml": configMap("cm"),
        "namespaces/eng/web/namespace.yaml": ns("web"),
      },
      [["KNV1007", "namespaces/eng/cm.yaml"]],
    ],
    [
      "an object naming another namespace than its directory (KNV1009)",
      { "namespaces/web/namespace.yaml": ns("web"), "namespaces/web/cm.yaml": configMap("cm", "api") },
      [["KNV1009", "namespaces/web/cm.yaml"]],
    ],
    ["no Repo in system/ (KNV1017)", { "namespaces/web/namespace.yaml": ns("web") }, [["KNV1017", "system"]], false],
    [
      "a Namespace directly in namespaces/ (KNV1019)",
      { "namespaces/namespace.yaml": ns("web") },
      [["KNV1019", "namespaces/namespace.yaml"]],
    ],
    [
      "a Namespace whose name is not its directory's (KNV1020)",
      { "namespaces/web/namespace.yaml": ns("api") },
      [["KNV1020", "namespaces/web/namespace.yaml"]],
    ],
    [
      "an unsupported Repo version (KNV1027)",
      { "system/repo.yaml": repo.replace("1.0.0", "0.0.1") },
      [["KNV1027", "system/repo.yaml"]],
    ],
    [
      "an object inherited into a namespace that declares it too (KNV1029)",
      {
        "namespaces/cm.yaml": configMap("settings"),
        "namespaces/web/namespace.yaml": ns("web"),
        "namespaces/web/cm.yaml": configMap("settings"),
      },
      [["KNV1029", "namespaces/web/cm.yaml"]],
    ],
    [
      "Config Sync's own namespace (KNV1034)",
      { "namespaces/config-management-system/namespace.yaml": ns("config-management-system") },
      [["KNV1034", "namespaces/config-management-system/namespace.yaml"]],
    ],
    [
      "a NamespaceSelector in a Namespace directory (KNV1038)",
      { "namespaces/web/namespace.yaml": ns("web"), "namespaces/web/selector.yaml": namespaceSelector },
      [["KNV1038", "namespaces/web/selector.yaml"]],
    ],
    [
      "a namespaced object outside namespaces/ (KNV1039)",
      { "cluster/cm.yaml": configMap("cm") },
      [["KNV1039", "cluster/cm.yaml"]],
    ],
    [
      "a cluster-scoped object in an abstract directory (KNV1039)",
      { "namespaces/eng/reader.yaml": clusterRole("reader"), "namespaces/eng/web/namespace.yaml": ns("web") },
      [["KNV1039", "namespaces/eng/reader.yaml"]],
    ],
    [
      "a Namespace outside namespaces/ (KNV1039)",
      { "cluster/cluster/namespace.yaml": ns("cluster") },
      [["KNV1039", "cluster/cluster/namespace.yaml"]],
    ],
    [
      "a HierarchyConfig outside system/ (KNV1039)",
      { "cluster/hc.yaml": hierarchyConfig("  - {group: apps, kinds: [Deployment]}\n") },
      [["KNV1039", "cluster/hc.yaml"]],
    ],
    [
      "a Repo whose spec.version is a number: Config Sync's typed decode refuses it (KNV1006), before the version rule",
      { "system/repo.yaml": repo.replace('"1.0.0"', "1") },
      [["KNV1006", "system/repo.yaml"]],
    ],
    [
      "a HierarchyConfig whose kinds is a string (KNV1006, Config Sync's typed decode)",
      { "system/hc.yaml": hierarchyConfig("  - {group: apps, kinds: Deployment}\n") },
      [["KNV1006", "system/hc.yaml"]],
    ],
    [
      "a HierarchyConfig whose hierarchyMode is a number (KNV1006, not KNV1042)",
      { "system/hc.yaml": hierarchyConfig("  - {group: apps, kinds: [Deployment], hierarchyMode: 5}\n") },
      [["KNV1006", "system/hc.yaml"]],
    ],
    [
      "a Cluster outside clusterregistry/ (KNV1039)",
      { "cluster/east.yaml": "apiVersion: clusterregistry.k8s.io/v1alpha1\nkind: Cluster\nmetadata: {name: east}\n" },
      [["KNV1039", "cluster/east.yaml"]],
    ],
    [
      "Namespace in a HierarchyConfig (KNV1041)",
      { "system/hc.yaml": hierarchyConfig('  - {group: "", kinds: [Namespace]}\n') },
      [["KNV1041", "system/hc.yaml"]],
    ],
    [
      "a hierarchyMode other than inherit or none (KNV1042)",
      { "system/hc.yaml": hierarchyConfig("  - {group: apps, kinds: [Deployment], hierarchyMode: sometimes}\n") },
      [["KNV1042", "system/hc.yaml"]],
    ],
    [
      "objects in a leaf directory without a Namespace (KNV1044)",
      { "namespaces/web/cm.yaml": configMap("cm") },
      [["KNV1044", "namespaces/web"]],
    ],
    [
      "objects in an abstract directory with no Namespace below (KNV1044)",
      {
        "namespaces/rnd/cm.yaml": configMap("cm"),
        "namespaces/rnd/labs/more.yaml": configMap("more"),
        "namespaces/web/namespace.yaml": ns("web"),
      },
      [
        ["KNV1044", "namespaces/rnd/labs"],
        ["KNV1044", "namespaces/rnd"],
      ],
    ],
    [
      "a kind declared in cluster/ in a HierarchyConfig (KNV1046)",
      {
        "system/hc.yaml": hierarchyConfig("  - {group: rbac.authorization.k8s.io, kinds: [ClusterRole]}\n"),
        "cluster/reader.yaml": clusterRole("reader"),
      },
      [["KNV1046", "system/hc.yaml"]],
    ],
    [
      "a cluster-scoped object in a Namespace directory (KNV1052, as Config Sync: it takes the directory's namespace)",
      { "namespaces/web/namespace.yaml": ns("web"), "namespaces/web/reader.yaml": clusterRole("reader") },
      [["KNV1052", "namespaces/web/reader.yaml"]],
    ],
    [
      "a cluster-scoped object declaring a namespace (KNV1052)",
      { "cluster/reader.yaml": clusterRole("reader", "cluster") },
      [["KNV1052", "cluster/reader.yaml"]],
    ],
    [
      "a Namespace declaring a namespace, even its own (KNV1052)",
      {
        "namespaces/web/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: web, namespace: web}\n",
      },
      [["KNV1052", "namespaces/web/namespace.yaml"]],
    ],
    [
      "a namespace-selected object in a Namespace directory, which gives it a namespace (KNV1053, as nomos)",
      {
        "namespaces/sandboxes.yaml": namespaceSelector,
        "namespaces/web/namespace.yaml": ns("web"),
        "namespaces/web/cm.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  annotations: {configmanagement.gke.io/namespace-selector: sandboxes}\n",
      },
      [["KNV1053", "namespaces/web/cm.yaml"]],
    ],
    [
      "a NamespaceSelector declaring metadata.namespace: it is cluster-scoped (KNV1052, as nomos)",
      {
        "namespaces/eng/selector.yaml": namespaceSelector.replace(
          "{name: sandboxes}",
          "{name: sandboxes, namespace: eng}",
        ),
        "namespaces/eng/web/namespace.yaml": ns("web"),
      },
      [["KNV1052", "namespaces/eng/selector.yaml"]],
    ],
    [
      "a namespace-selected NamespaceSelector: it is cluster-scoped (KNV1004, as nomos)",
      {
        "namespaces/selector.yaml": namespaceSelector.replace(
          "{name: sandboxes}",
          "{name: sandboxes, annotations: {configmanagement.gke.io/namespace-selector: sandboxes}}",
        ),
        "namespaces/web/namespace.yaml": ns("web"),
      },
      [["KNV1004", "namespaces/selector.yaml"]],
    ],
    [
      "a namespace-selected ClusterRole with the scopes, before a broken HierarchyConfig (KNV1004 alone, as nomos)",
      {
        "cluster/reader.yaml": clusterRole("reader").replace(
          "name: reader\n",
          "name: reader\n  annotations: {configmanagement.gke.io/namespace-selector: sandboxes}\n",
        ),
        "system/hc.yaml": hierarchyConfig("  - {group: configmanagement.gke.io, kinds: [Repo]}\n"),
        "namespaces/web/namespace.yaml": ns("web"),
      },
      [["KNV1004", "cluster/reader.yaml"]],
    ],
    [
      "NamespaceSelectors sharing a name with the scopes, before one's place in a Namespace directory (KNV1029 alone, as nomos)",
      {
        "namespaces/selector.yaml": namespaceSelector,
        "namespaces/web/namespace.yaml": ns("web"),
        "namespaces/web/selector.yaml": namespaceSelector,
      },
      [["KNV1029", "namespaces/selector.yaml"]],
    ],
    [
      "a HierarchyConfig in a Namespace directory, which gives it a namespace (KNV1052, as nomos)",
      {
        "namespaces/web/namespace.yaml": ns("web"),
        "namespaces/web/hc.yaml": hierarchyConfig("  - {group: apps, kinds: [Deployment]}\n"),
      },
      [["KNV1052", "namespaces/web/hc.yaml"]],
    ],
    [
      "the Repo in a Namespace directory (KNV1052, as nomos)",
      { "namespaces/web/namespace.yaml": ns("web"), "namespaces/web/repo.yaml": repo },
      [["KNV1052", "namespaces/web/repo.yaml"]],
      false,
    ],
    [
      "a HierarchyConfig declaring a namespace, even that of its directory (KNV1052, as nomos)",
      {
        "system/hc.yaml": hierarchyConfig("  - {group: apps, kinds: [Deployment]}\n").replace(
          "{name: config}",
          "{name: config, namespace: system}",
        ),
      },
      [["KNV1052", "system/hc.yaml"]],
    ],
    [
      "a HierarchyConfig in an abstract directory, which gives it no namespace (KNV1039)",
      {
        "namespaces/eng/hc.yaml": hierarchyConfig("  - {group: apps, kinds: [Deployment]}\n"),
        "namespaces/eng/web/namespace.yaml": ns("web"),
      },
      [["KNV1039", "namespaces/eng/hc.yaml"]],
    ],
    [
      "only the scope errors when objects are misplaced too: Config Sync builds the tree only when scopes hold",
      {
        "namespaces/web/namespace.yaml": ns("web"),
        "namespaces/web/hc.yaml": hierarchyConfig("  - {group: apps, kinds: [Deployment]}\n"),
        "namespaces/web/reader.yaml": clusterRole("reader", "web"),
        "cluster/cm.yaml": configMap("cm"),
      },
      [
        ["KNV1052", "namespaces/web/hc.yaml"],
        ["KNV1052", "namespaces/web/reader.yaml"],
      ],
    ],
    [
      "a declared HNC depth label (KNV1057)",
      { "namespaces/web/namespace.yaml": ns("web", "eng.tree.hnc.x-k8s.io/depth: '1'") },
      [["KNV1057", "namespaces/web/namespace.yaml"]],
    ],
    [
      "two Namespaces in one directory (KNV2012)",
      { "namespaces/web/a.yaml": ns("web"), "namespaces/web/b.yaml": ns("web") },
      [["KNV2012", "namespaces/web/a.yaml"]],
    ],
    [
      "two Repos (KNV2012)",
      { "system/another.yaml": repo.replace("name: repo", "name: another") },
      [["KNV2012", "system/another.yaml"]],
    ],
  ];
  for (const [what, files, expected, withRepo] of cases) {
    void it(`reports ${what}`, async () => {
      assert.deepEqual(errorsOf(await hierarchy(files, withRepo ?? true)), expected);
    });
  }

  void it("stops at the first stage with errors, as Config Sync does: a directory error hides the tree's", async () => {
    const result = await hierarchy({
      "namespaces/web/namespace.yaml": ns("api"),
      "namespaces/orphan/cm.yaml": configMap("cm"),
    });
    assert.deepEqual(errorsOf(result), [["KNV1020", "namespaces/web/namespace.yaml"]]);
  });

  void it("words a missing Repo as Config Sync does (KNV1017)", async () => {
    const result = await hierarchy({ "namespaces/web/namespace.yaml": ns("web") }, false);
    assert.match(result.errors[0]?.message ?? "", /^The system\/ directory must declare a Repo Resource\./);
  });

  void it("names the object and file in each message", async () => {
    const result = await hierarchy({ "namespaces/web/namespace.yaml": ns("api") });
    assert.ok(!result.complete);
    assert.match(
      result.errors[0]?.message ?? "",
      /^namespaces\/web\/namespace\.yaml: Namespace "api": .*expected "web"/,
    );
    assert.deepEqual(result.errors[0]?.resources, [
      { group: "", version: "v1", kind: "Namespace", name: "api", sourcePath: "namespaces/web/namespace.yaml" },
    ]);
  });
});
