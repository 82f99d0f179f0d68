import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SourceFormat } from "@driftless/api";
import { builtinKinds } from "./builtin-kinds.ts";
import { clusterNamesIn } from "./cluster-selection.ts";
import { readManifests } from "./read-manifests.ts";
import { readSource } from "./read-source.ts";
import type { ReadSourceOptions } from "./read-source.ts";
import type { SourceResult } from "./result.ts";
import { fakeDiscovery, withTree } from "./testing.ts";

const repo = `apiVersion: configmanagement.gke.io/v1\nkind: Repo\nmetadata: {name: repo}\nspec: {version: "1.0.0"}\n`;
const ns = (name: string, labels = ""): string =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n${labels ? `  labels: {${labels}}\n` : ""}`;
const cm = (name: string, annotations = "", namespace = ""): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ""}${annotations ? `  annotations: {${annotations}}\n` : ""}data: {}\n`;
const nsSelector = (name: string, spec: string): string =>
  `apiVersion: configmanagement.gke.io/v1\nkind: NamespaceSelector\nmetadata: {name: ${name}}\nspec: ${spec}\n`;
const cluster = (name: string, labels: string): string =>
  `apiVersion: clusterregistry.k8s.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\n  labels: {${labels}}\n`;
const clusterSelector = (name: string, spec: string): string =>
  `apiVersion: configmanagement.gke.io/v1\nkind: ClusterSelector\nmetadata: {name: ${name}}\nspec: ${spec}\n`;
const selects = (selector: string): string => `configmanagement.gke.io/namespace-selector: ${selector}`;

async function read(
  files: Readonly<Record<string, string>>,
  options: Partial<ReadSourceOptions> = {},
): Promise<SourceResult> {
  return withTree(files, (dir) => readSource(dir, { scope: { kind: "RootSync" }, kinds: fakeDiscovery(), ...options }));
}
const hierarchy = (files: Readonly<Record<string, string>>, options: Partial<ReadSourceOptions> = {}) =>
  read({ "system/repo.yaml": repo, ...files }, { format: SourceFormat.Hierarchy, ...options });

function declared(result: SourceResult): string[] {
  assert.ok(result.complete, result.errors.map((e) => `${e.code} ${e.message}`).join("\n"));
  return result.objects.map((o) => `${o.kind} ${o.id.namespace ? `${o.id.namespace}/` : ""}${o.id.name}`);
}
function codes(result: SourceResult): string[] {
  assert.ok(!result.complete, "expected the source to fail");
  return result.errors.map((e) => e.code);
}

void describe("NamespaceSelectors, unstructured", () => {
  const base = {
    "a.yaml": ns("a", "env: prod"),
    "b.yaml": ns("b", "env: dev"),
    "sel.yaml": nsSelector("prod", "{selector: {matchLabels: {env: prod}}}"),
    "cm.yaml": cm("settings", selects("prod")),
  };

  void it("copies an annotated object into every declared Namespace the selector matches, and applies no selector", async () => {
    assert.deepEqual(declared(await read(base)), ["Namespace a", "Namespace b", "ConfigMap a/settings"]);
  });

  void it("a source whose selectors select nothing is not empty: what they selected before is pruned, not guarded (KNV2006)", async () => {
    const onlySelected = {
      "sel.yaml": nsSelector("prod", "{mode: dynamic, selector: {matchLabels: {env: prod}}}"),
      "cm.yaml": cm("settings", selects("prod")),
    };
    const result = await read(onlySelected, { liveNamespaces: [{ name: "c", labels: { env: "dev" } }] });
    assert.deepEqual(declared(result), []);
    assert.equal(result.complete && result.isEmpty, false);
    // A source of Config Sync's own configuration kinds only declares nothing.
    const selectorsOnly = await read({ "sel.yaml": onlySelected["sel.yaml"] });
    assert.equal(selectorsOnly.complete && selectorsOnly.isEmpty, true);
  });

  void it("static mode ignores the cluster's namespaces; dynamic mode selects them too (not terminating ones)", async () => {
    const liveNamespaces = [
      { name: "c", labels: { env: "prod" } },
      { name: "d", labels: { env: "prod" }, terminating: true },
    ];
    assert.deepEqual(declared(await read(base, { liveNamespaces })), [
      "Namespace a",
      "Namespace b",
      "ConfigMap a/settings",
    ]);
    const dynamic = {
      ...base,
      "sel.yaml": nsSelector("prod", "{mode: dynamic, selector: {matchLabels: {env: prod}}}"),
    };
    assert.deepEqual(declared(await read(dynamic, { liveNamespaces })), [
      "Namespace a",
      "Namespace b",
      "ConfigMap c/settings",
      "ConfigMap a/settings",
    ]);
  });

  void it("supports matchExpressions", async () => {
    const files = {
      ...base,
      "sel.yaml": nsSelector("prod", "{selector: {matchExpressions: [{key: env, operator: NotIn, values: [prod]}]}}"),
    };
    assert.deepEqual(declared(await read(files)), ["Namespace a", "Namespace b", "ConfigMap b/settings"]);
  });

  const errorCases: [string, Record<string, string>, string[]][] = [
    ["a selector nobody declares (KNV1013)", { "cm.yaml": cm("x", selects("nope")) }, ["KNV1013"]],
    [
      "metadata.namespace next to the annotation (KNV1053)",
      { ...base, "cm.yaml": cm("x", selects("prod"), "a") },
      ["KNV1053"],
    ],
    [
      "a namespace selector on a cluster-scoped object (KNV1004)",
      {
        ...base,
        "cm.yaml": `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: z\n  annotations: {${selects("prod")}}\n`,
      },
      ["KNV1004"],
    ],
    ["an empty selector (KNV1014)", { ...base, "sel.yaml": nsSelector("prod", "{selector: {}}") }, ["KNV1014"]],
    [
      "a matchLabels key no label may have (KNV1014, as metav1.LabelSelectorAsSelector refuses it)",
      { ...base, "sel.yaml": nsSelector("prod", '{selector: {matchLabels: {"bad key!": x}}}') },
      ["KNV1014"],
    ],
    [
      "a matchExpressions value no label may have (KNV1014)",
      {
        ...base,
        "sel.yaml": nsSelector("prod", '{selector: {matchExpressions: [{key: env, operator: NotIn, values: ["-x"]}]}}'),
      },
      ["KNV1014"],
    ],
    [
      "an unknown mode (KNV1014)",
      { ...base, "sel.yaml": nsSelector("prod", "{mode: sometimes, selector: {matchLabels: {a: b}}}") },
      ["KNV1014"],
    ],
    [
      "two selectors of one name (KNV1029)",
      { ...base, "sel2.yaml": nsSelector("prod", "{selector: {matchLabels: {a: b}}}") },
      ["KNV1029"],
    ],
    [
      "a NamespaceSelector declaring metadata.namespace: it is cluster-scoped (KNV1052, as nomos)",
      {
        ...base,
        "sel.yaml": nsSelector("prod", "{selector: {matchLabels: {env: prod}}}").replace(
          "metadata: {name: prod}",
          "metadata: {name: prod, namespace: a}",
        ),
      },
      ["KNV1052"],
    ],
    [
      "a namespace-selected NamespaceSelector: it is cluster-scoped (KNV1004, as nomos)",
      {
        ...base,
        "sel.yaml": nsSelector("prod", "{selector: {matchLabels: {env: prod}}}").replace(
          "metadata: {name: prod}",
          `metadata: {name: prod, annotations: {${selects("prod")}}}`,
        ),
      },
      ["KNV1004"],
    ],
  ];
  for (const [what, files, expected] of errorCases) {
    void it(`reports ${what}`, async () => {
      assert.deepEqual(codes(await read(files)), expected);
    });
  }
});

void describe("NamespaceSelectors, hierarchy", () => {
  const files = {
    "namespaces/eng/sel.yaml": nsSelector("prod", "{selector: {matchLabels: {env: prod}}}"),
    "namespaces/eng/cm.yaml": cm("settings", selects("prod")),
    "namespaces/eng/a/namespace.yaml": ns("a", "env: prod"),
    "namespaces/eng/b/namespace.yaml": ns("b", "env: dev"),
  };

  void it("keeps an inherited object only in the descendant namespaces the selector matches", async () => {
    assert.deepEqual(declared(await hierarchy(files)), ["Namespace a", "ConfigMap a/settings", "Namespace b"]);
  });

  void it("matches the HNC depth labels Config Sync writes", async () => {
    const byDepth = {
      ...files,
      "namespaces/eng/sel.yaml": nsSelector("prod", "{selector: {matchLabels: {a.tree.hnc.x-k8s.io/depth: '0'}}}"),
    };
    assert.deepEqual(declared(await hierarchy(byDepth)), ["Namespace a", "ConfigMap a/settings", "Namespace b"]);
  });

  void it("refuses a hierarchy NamespaceSelector whose key no label may have (KNV1014)", async () => {
    const badKey = {
      ...files,
      "namespaces/eng/sel.yaml": nsSelector("prod", '{selector: {matchLabels: {"bad key!": prod}}}'),
    };
    assert.deepEqual(codes(await hierarchy(badKey)), ["KNV1014"]);
  });

  void it("refuses a selector outside the object's directory and its parents (KNV1013), and dynamic or unknown modes (KNV1014) in Config Sync's words", async () => {
    const elsewhere = {
      ...files,
      "namespaces/eng/sel.yaml": undefined,
      "namespaces/ops/sel.yaml": nsSelector("prod", "{selector: {matchLabels: {env: prod}}}"),
      "namespaces/ops/c/namespace.yaml": ns("c"),
    };
    const present = Object.fromEntries(Object.entries(elsewhere).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >;
    assert.deepEqual(codes(await hierarchy(present)), ["KNV1013"]);
    const dynamic = {
      ...files,
      "namespaces/eng/sel.yaml": nsSelector("prod", "{mode: dynamic, selector: {matchLabels: {env: prod}}}"),
    };
    const refused = await hierarchy(dynamic);
    assert.deepEqual(codes(refused), ["KNV1014"]);
    // Config Sync's sentence first: its CLI e2e test (cli_test.go) matches `KNV1014: <sentence>`.
    assert.match(
      refused.errors[0]?.message ?? "",
      /^NamespaceSelector MUST NOT use the dynamic mode with the hierarchy source format: namespaces\/eng\/sel\.yaml: /,
    );
    const unknown = {
      ...files,
      "namespaces/eng/sel.yaml": nsSelector("prod", "{mode: sometimes, selector: {matchLabels: {env: prod}}}"),
    };
    const refusedMode = await hierarchy(unknown);
    assert.deepEqual(codes(refusedMode), ["KNV1014"]);
    assert.match(
      refusedMode.errors[0]?.message ?? "",
      /^Unknown mode defined in NamespaceSelector: namespaces\/eng\/sel\.yaml: .*"sometimes"/,
    );
  });
});

void describe("selectors whose spec holds a value of the wrong type", () => {
  const hierarchyFiles = (spec: string): Record<string, string> => ({
    "namespaces/eng/sel.yaml": nsSelector("prod", spec),
    "namespaces/eng/cm.yaml": cm("settings", selects("prod")),
    "namespaces/eng/a/namespace.yaml": ns("a", "env: 'y'"),
  });

  void it("reports a NamespaceSelector whose matchLabels value YAML reads as a boolean as unparsable (KNV1006, as nomos), in Config Sync's words", async () => {
    // `y` unquoted is YAML 1.1's true: Config Sync cannot decode the object, so no selector rule is reached.
    const result = await hierarchy(hierarchyFiles("{selector: {matchLabels: {env: y}}}"));
    assert.deepEqual(codes(result), ["KNV1006"]);
    assert.match(
      result.errors[0]?.message ?? "",
      /^The following config could not be parsed as a configmanagement\.gke\.io\/v1, Kind=NamespaceSelector: namespaces\/eng\/sel\.yaml: .*spec\.selector\.matchLabels\.env must be a string, found a boolean/,
    );
  });

  const unparsable: [string, string][] = [
    ["a number in matchLabels", "{selector: {matchLabels: {env: 5}}}"],
    ["matchLabels as a list", "{selector: {matchLabels: [env]}}"],
    ["an expression that is not a mapping", "{selector: {matchExpressions: [env]}}"],
    ["a number as an operator", "{selector: {matchExpressions: [{key: env, operator: 5, values: [a]}]}}"],
    ["a number among values", "{selector: {matchExpressions: [{key: env, operator: In, values: [1]}]}}"],
    ["a number as the mode", "{mode: 5, selector: {matchLabels: {env: 'y'}}}"],
    ["spec.selector as a list", "{selector: [env]}"],
    ["spec as a list", "[env]"],
  ];
  for (const [what, spec] of unparsable) {
    void it(`reports ${what} in a NamespaceSelector as unparsable (KNV1006), in both formats`, async () => {
      assert.deepEqual(codes(await hierarchy(hierarchyFiles(spec))), ["KNV1006"]);
      const unstructured = {
        "a.yaml": ns("a"),
        "sel.yaml": nsSelector("prod", spec),
        "cm.yaml": cm("x", selects("prod")),
      };
      assert.deepEqual(codes(await read(unstructured)), ["KNV1006"]);
    });
  }

  void it("reads null as the zero value, as Config Sync's decode does: an empty label value, an empty mode", async () => {
    const files = hierarchyFiles("{mode: null, selector: {matchLabels: {env: null}}}");
    assert.deepEqual(declared(await hierarchy({ ...files, "namespaces/eng/a/namespace.yaml": ns("a", "env: ''") })), [
      "Namespace a",
      "ConfigMap a/settings",
    ]);
  });

  void it("reports a ClusterSelector whose matchLabels value YAML reads as a boolean as unparsable (KNV1006, as nomos)", async () => {
    const files = {
      "clusterregistry/east.yaml": cluster("east", "env: 'y'"),
      "clusterregistry/prod.yaml": clusterSelector("prod", "{selector: {matchLabels: {env: y}}}"),
      "namespaces/web/namespace.yaml": ns("web"),
      "namespaces/web/cm.yaml": cm("prod-only", "configmanagement.gke.io/cluster-selector: prod"),
    };
    const result = await hierarchy(files, { clusterName: "east" });
    assert.deepEqual(codes(result), ["KNV1006"]);
    assert.match(result.errors[0]?.message ?? "", /Kind=ClusterSelector: clusterregistry\/prod\.yaml: /);
  });
});

void describe("ClusterSelectors and cluster-name selectors", () => {
  const clusterFiles = {
    "clusterregistry/east.yaml": cluster("east", "env: prod"),
    "clusterregistry/west.yaml": cluster("west", "env: dev"),
    "clusterregistry/prod.yaml": clusterSelector("prod", "{selector: {matchLabels: {env: prod}}}"),
  };

  void it("keeps an object only on the clusters its ClusterSelector matches, by the labels of the Cluster named after this one", async () => {
    const files = {
      ...clusterFiles,
      "namespaces/web/namespace.yaml": ns("web"),
      "namespaces/web/cm.yaml": cm("prod-only", "configmanagement.gke.io/cluster-selector: prod"),
      "namespaces/web/all.yaml": cm("all"),
    };
    assert.deepEqual(declared(await hierarchy(files, { clusterName: "east" })), [
      "ConfigMap web/all",
      "ConfigMap web/prod-only",
      "Namespace web",
    ]);
    assert.deepEqual(declared(await hierarchy(files, { clusterName: "west" })), ["ConfigMap web/all", "Namespace web"]);
  });

  void it("leaves out an unselected Namespace with everything in it", async () => {
    const files = {
      ...clusterFiles,
      "namespaces/web/namespace.yaml": `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n  annotations: {configmanagement.gke.io/cluster-selector: prod}\n`,
      "namespaces/web/cm.yaml": cm("x"),
    };
    assert.deepEqual(declared(await hierarchy(files, { clusterName: "west" })), []);
  });

  void it("matches cluster-name-selector lists case-insensitively; without a cluster name nothing selected is kept (unstructured)", async () => {
    const files = {
      "a.yaml": cm("a", "configsync.gke.io/cluster-name-selector: 'north, East'", "default"),
      "b.yaml": cm("b", "configsync.gke.io/cluster-name-selector: west", "default"),
      "c.yaml": cm("c", "", "default"),
    };
    assert.deepEqual(declared(await read(files, { clusterName: "east" })), [
      "ConfigMap default/a",
      "ConfigMap default/c",
    ]);
    assert.deepEqual(declared(await read(files)), ["ConfigMap default/c"]);
  });

  void it("reads Cluster and ClusterSelector objects in unstructured sources without applying them", async () => {
    const files = { ...clusterFiles, "a.yaml": cm("a", "configmanagement.gke.io/cluster-selector: prod", "default") };
    assert.deepEqual(declared(await read(files, { clusterName: "east" })), ["ConfigMap default/a"]);
    assert.deepEqual(declared(await read(files, { clusterName: "west" })), []);
  });

  const errorCases: [string, Record<string, string>, string[]][] = [
    [
      "an unknown ClusterSelector (KNV1013)",
      { "a.yaml": cm("a", "configmanagement.gke.io/cluster-selector: nope", "default") },
      ["KNV1013"],
    ],
    [
      "both cluster annotations (KNV1066)",
      {
        "a.yaml": cm(
          "a",
          "configmanagement.gke.io/cluster-selector: prod, configsync.gke.io/cluster-name-selector: east",
          "default",
        ),
        ...clusterFiles,
      },
      ["KNV1066"],
    ],
    [
      "a cluster-selected ClusterSelector (KNV1004)",
      {
        "s.yaml": `apiVersion: configmanagement.gke.io/v1\nkind: ClusterSelector\nmetadata:\n  name: s\n  annotations: {configsync.gke.io/cluster-name-selector: east}\nspec: {selector: {matchLabels: {a: b}}}\n`,
      },
      ["KNV1004"],
    ],
    [
      "an empty ClusterSelector (KNV1014)",
      {
        "s.yaml": clusterSelector("s", "{selector: {}}"),
        "a.yaml": cm("a", "configmanagement.gke.io/cluster-selector: s", "default"),
      },
      ["KNV1014"],
    ],
    ...[
      '{matchLabels: {"bad key!": x}}',
      '{matchLabels: {"Example.com/env": x}}',
      '{matchLabels: {env: "bad value!"}}',
      `{matchLabels: {env: ${"a".repeat(64)}}}`,
      '{matchExpressions: [{key: "a/b/c", operator: Exists}]}',
      '{matchExpressions: [{key: env, operator: In, values: ["x y"]}]}',
    ].map((selector): [string, Record<string, string>, string[]] => [
      `a ClusterSelector no label could satisfy, ${selector} (KNV1014)`,
      {
        "s.yaml": clusterSelector("s", `{selector: ${selector}}`),
        "a.yaml": cm("a", "configmanagement.gke.io/cluster-selector: s", "default"),
      },
      ["KNV1014"],
    ]),
  ];
  for (const [what, files, expected] of errorCases) {
    void it(`reports ${what}`, async () => {
      assert.deepEqual(codes(await read(files, { clusterName: "east" })), expected);
    });
  }

  void it("says of both cluster annotations what Config Sync says (KNV1066), then which object and file", async () => {
    const both = "configmanagement.gke.io/cluster-selector: prod, configsync.gke.io/cluster-name-selector: east";
    const result = await read({ ...clusterFiles, "a.yaml": cm("a", both, "default") }, { clusterName: "east" });
    assert.equal(
      result.errors[0]?.message,
      'Config "a" MUST declare ONLY ONE cluster-selector annotation, but has both inline annotation ' +
        '"configsync.gke.io/cluster-name-selector" and legacy annotation "configmanagement.gke.io/cluster-selector". ' +
        'To fix, remove one of the annotations from: a.yaml: ConfigMap "default/a"',
    );
  });
});

void describe("selector versions, as Config Sync reads them", () => {
  const at = (version: string, manifest: string): string =>
    manifest.replace(/^apiVersion: (\S+)\/v1\w*$/m, `apiVersion: $1/${version}`);
  const offline = { kinds: builtinKinds, allowUnknownKinds: true } as const;

  void it("selects only with ClusterSelectors and NamespaceSelectors of v1: an object naming one of v2 or v1beta1 is KNV1013", async () => {
    const byCluster = {
      "cluster.yaml": cluster("prod", "env: prod"),
      "sel.yaml": at("v2", clusterSelector("prod", "{selector: {matchLabels: {env: prod}}}")),
      "cm.yaml": cm("settings", "configmanagement.gke.io/cluster-selector: prod", "shop"),
    };
    assert.deepEqual(codes(await read(byCluster, { clusterName: "prod" })), ["KNV1013"]);
    const byNamespace = {
      "a.yaml": ns("a", "env: prod"),
      "sel.yaml": at("v1beta1", nsSelector("prod", "{selector: {matchLabels: {env: prod}}}")),
      "cm.yaml": cm("settings", selects("prod")),
    };
    assert.deepEqual(codes(await read(byNamespace, offline)), ["KNV1013"]);
    // A reconciler also reports the kind its cluster does not serve (Config Sync's fails to apply it later).
    assert.deepEqual(codes(await read(byNamespace)), ["KNV1021", "KNV1013"]);
  });

  void it("declares a ClusterSelector, NamespaceSelector or Cluster of another version as an ordinary cluster-scoped object", async () => {
    const files = {
      "cluster.yaml": at("v1beta1", cluster("prod", "env: prod")),
      "cs.yaml": at("v2", clusterSelector("prod", "{selector: {matchLabels: {env: prod}}}")),
      "nss.yaml": at("v1beta1", nsSelector("prod", "{selector: {matchLabels: {env: prod}}}")),
    };
    assert.deepEqual(declared(await read(files, offline)), [
      "Cluster prod",
      "ClusterSelector prod",
      "NamespaceSelector prod",
    ]);
    // A Cluster of another version names no cluster to check the source for.
    const set = await withTree({ ...files, "v1.yaml": cluster("east", "env: dev") }, (dir) => readManifests(dir));
    assert.deepEqual(clusterNamesIn(set.manifests), ["east"]);
  });

  void it("still requires unique selector names across versions (KNV1029)", async () => {
    const clusterSelectors = {
      "v1.yaml": clusterSelector("prod", "{selector: {matchLabels: {env: prod}}}"),
      "v2.yaml": at("v2", clusterSelector("prod", "{selector: {matchLabels: {env: prod}}}")),
    };
    assert.deepEqual(codes(await read(clusterSelectors, offline)), ["KNV1029"]);
    const namespaceSelectors = {
      "v1.yaml": nsSelector("prod", "{selector: {matchLabels: {env: prod}}}"),
      "v1beta1.yaml": at("v1beta1", nsSelector("prod", "{selector: {matchLabels: {env: prod}}}")),
    };
    assert.deepEqual(codes(await read(namespaceSelectors, offline)), ["KNV1029"]);
  });

  void it("in a hierarchy, a selector of another version is a cluster-scoped object outside cluster/ (KNV1039)", async () => {
    const files = {
      "clusterregistry/sel.yaml": at("v2", clusterSelector("prod", "{selector: {matchLabels: {env: prod}}}")),
      "namespaces/sel.yaml": at("v1beta1", nsSelector("dev", "{selector: {matchLabels: {env: dev}}}")),
    };
    assert.deepEqual(codes(await hierarchy(files, offline)), ["KNV1039", "KNV1039"]);
  });
});
