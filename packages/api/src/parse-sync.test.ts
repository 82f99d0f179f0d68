import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidSyncError } from "./invalid-sync-error.ts";
import { parseRepoSync, parseRootSync, parseSync, type ParseResult } from "./parse-sync.ts";

function rootSync(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system", ...metadata },
    spec,
  };
}

function repoSync(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace: "bookstore", ...metadata },
    spec,
  };
}

const publicGit = { repo: "https://github.com/example/config", auth: "none" };

function messages<T>(result: ParseResult<T>): string[] {
  assert.equal(result.ok, false, "expected the sync to be rejected");
  return result.ok ? [] : result.errors.map((e) => e.message);
}

function assertRejectedWith<T>(result: ParseResult<T>, fragment: string): void {
  const found = messages(result);
  assert.ok(
    found.some((m) => m.includes(fragment)),
    `no message contains "${fragment}": ${JSON.stringify(found)}`,
  );
}

void describe("parseRootSync", () => {
  void it("accepts a Config Sync RootSync and fills in Config Sync's defaults", () => {
    const result = parseRootSync(rootSync({ git: publicGit }));
    assert.ok(result.ok);
    assert.deepEqual(result.value.spec, {
      sourceType: "git",
      sourceFormat: "hierarchy",
      git: {
        repo: "https://github.com/example/config",
        branch: "master",
        revision: "HEAD",
        dir: ".",
        period: "15s",
        auth: "none",
      },
    });
  });

  void it("keeps what the user set, including token auth with a Secret and overrides", () => {
    const result = parseRootSync(
      rootSync(
        {
          sourceFormat: "unstructured",
          git: {
            repo: "https://github.com/example/config",
            branch: "main",
            dir: "clusters/prod",
            period: "30s",
            auth: "token",
            secretRef: { name: "git-creds" },
          },
          override: {
            reconcileTimeout: "2m",
            resources: [{ containerName: "reconciler", cpuRequest: "200m", memoryLimit: "1Gi" }],
            roleRefs: [
              { kind: "ClusterRole", name: "edit" },
              { kind: "Role", name: "admin", namespace: "shop" },
            ],
            namespaceStrategy: "explicit",
          },
        },
        { annotations: { "configsync.gke.io/deletion-propagation-policy": "Foreground" } },
      ),
    );
    assert.ok(result.ok, JSON.stringify(result));
    const { spec, metadata } = result.value;
    assert.equal(spec.sourceFormat, "unstructured");
    assert.equal(spec.git?.branch, "main");
    assert.equal(spec.git?.dir, "clusters/prod");
    assert.equal(spec.git?.period, "30s");
    assert.deepEqual(spec.git?.secretRef, { name: "git-creds" });
    assert.equal(spec.override?.reconcileTimeout, "2m");
    assert.deepEqual(spec.override?.roleRefs, [
      { kind: "ClusterRole", name: "edit" },
      { kind: "Role", name: "admin", namespace: "shop" },
    ]);
    assert.equal(metadata.annotations?.["configsync.gke.io/deletion-propagation-policy"], "Foreground");
  });

  void it("accepts v1alpha1 objects, which Config Sync still serves", () => {
    assert.ok(parseRootSync({ ...rootSync({ git: publicGit }), apiVersion: "configsync.gke.io/v1alpha1" }).ok);
  });

  void it("rejects a RootSync outside config-management-system with KNV1061, terminal, naming the sync", () => {
    const result = parseRootSync(rootSync({ git: publicGit }, { namespace: "shop" }));
    assert.equal(result.ok, false);
    if (result.ok) return;
    const [error] = result.errors;
    assert.ok(error instanceof InvalidSyncError);
    assert.equal(error.code, "KNV1061");
    assert.equal(error.errorClass, "terminal");
    // The sync is named by the error's `sync`; as Config Sync's KNV1061, it lists no errorResources.
    assert.deepEqual(error.sync, { kind: "RootSync", namespace: "shop", name: "root-sync" });
    assert.deepEqual(error.resources, []);
    assert.match(error.message, /only allowed in the config-management-system namespace, not in shop/);
  });

  void it("rejects a RootSync name longer than 38 characters (the inventory-id label would overflow)", () => {
    assertRejectedWith(
      parseRootSync(rootSync({ git: publicGit }, { name: "r".repeat(39) })),
      "maximum length of RootSync name is 38, but found 39",
    );
    assert.ok(parseRootSync(rootSync({ git: publicGit }, { name: "r".repeat(38) })).ok);
  });

  void it("a misplaced or too long sync gets Config Sync's one message, whatever else its spec lacks", () => {
    assert.deepEqual(messages(parseRootSync(rootSync({ git: { auth: "none" } }, { namespace: "test-ns" }))), [
      "RootSync objects are only allowed in the config-management-system namespace, not in test-ns",
    ]);
    assert.deepEqual(
      messages(parseRepoSync(repoSync({ git: { auth: "none" } }, { namespace: "config-management-system" }))),
      ["RepoSync objects are not allowed in the config-management-system namespace"],
    );
    assert.deepEqual(
      messages(parseRepoSync(repoSync({ git: { auth: "none" } }, { namespace: "test-ns", name: "a".repeat(253) }))),
      ["maximum combined length of RepoSync name and namespace is 45, but found 260"],
    );
  });

  void it("rejects unknown source types, and a source without its spec or repo", () => {
    assertRejectedWith(parseRootSync(rootSync({ sourceType: "oci" })), "must specify spec.oci");
    assertRejectedWith(
      parseRootSync(rootSync({ sourceType: "svn" })),
      `RootSyncs must specify spec.sourceType to be one of "git", "oci", "helm"`,
    );
    assertRejectedWith(parseRootSync(rootSync({})), "must specify spec.git");
    assertRejectedWith(
      parseRootSync(rootSync({ git: { auth: "none" } })),
      `RootSyncs must specify spec.git.repo when spec.sourceType is "git"`,
    );
  });

  void it("enforces Config Sync's secretRef rules per auth type", () => {
    assertRejectedWith(
      parseRootSync(rootSync({ git: { ...publicGit, auth: "token" } })),
      `RootSyncs which specify spec.git.auth as one of "ssh", "cookiefile", "githubapp", or "token" must also specify spec.git.secretRef`,
    );
    assertRejectedWith(
      parseRootSync(rootSync({ git: { ...publicGit, secretRef: { name: "x" } } })),
      `RootSyncs which specify spec.git.auth as one of "none", "gcenode", or "gcpserviceaccount" must not specify spec.git.secretRef`,
    );
    assertRejectedWith(
      parseRootSync(rootSync({ git: { ...publicGit, auth: "ssh", secretRef: { name: "k" }, proxy: "http://p" } })),
      "spec.git.proxy must also specify spec.git.auth",
    );
  });

  void it("words a missing source block and a proxy with ssh as Config Sync does", () => {
    const without = (sourceType: string) => parseRootSync(rootSync({ sourceType }));
    assertRejectedWith(without("oci"), `RootSyncs must specify spec.oci when spec.sourceType is "oci"`);
    assertRejectedWith(without("helm"), `RootSyncs must specify spec.helm when spec.sourceType is "helm"`);
    assertRejectedWith(without("git"), `RootSyncs must specify spec.git when spec.sourceType is "git"`);
    assertRejectedWith(
      parseRootSync(rootSync({ git: { ...publicGit, auth: "ssh", secretRef: { name: "k" }, proxy: "http://p" } })),
      `RootSyncs which specify spec.git.proxy must also specify spec.git.auth as one of "none", "cookiefile", "token" or "githubapp"`,
    );
  });

  void it("refuses valid Config Sync auth types driftless does not implement, saying which it does", () => {
    assertRejectedWith(
      parseRootSync(rootSync({ git: { ...publicGit, auth: "githubapp", secretRef: { name: "c" } } })),
      "not supported by driftless (supported: none, token, ssh, cookiefile)",
    );
    assertRejectedWith(
      parseRootSync(rootSync({ git: { ...publicGit, auth: "gcpserviceaccount" } })),
      "gcpServiceAccountEmail",
    );
  });

  void it("rejects durations Go would not parse and bad overrides", () => {
    assertRejectedWith(
      parseRootSync(rootSync({ git: { ...publicGit, period: "15" } })),
      `spec.git.period must be a duration`,
    );
    assertRejectedWith(parseRootSync(rootSync({ git: publicGit, override: { gitSyncDepth: -1 } })), "gitSyncDepth");
    assertRejectedWith(
      parseRootSync(rootSync({ git: publicGit, override: { roleRefs: [{ kind: "Role", name: "x" }] } })),
      "RootSyncs must specify 'spec.override.roleRefs.namespace' for role references with kind Role",
    );
    assertRejectedWith(
      parseRootSync(rootSync({ git: publicGit, override: { resources: [{ cpuLimit: "-1" }] } })),
      "RootSync field 'spec.override.resources.cpuLimit' must not be negative",
    );
  });

  void it("rejects an unknown deletion propagation policy", () => {
    assertRejectedWith(
      parseRootSync(
        rootSync({ git: publicGit }, { annotations: { "configsync.gke.io/deletion-propagation-policy": "Delete" } }),
      ),
      `RootSyncs which specify the annotation "configsync.gke.io/deletion-propagation-policy" must use one of the values "Foreground" or "Orphan"`,
    );
  });

  void it("reports every problem at once", () => {
    const result = parseRootSync(rootSync({ git: { auth: "token", period: "soon" }, sourceFormat: "flat" }));
    assert.ok(messages(result).length >= 4, JSON.stringify(messages(result)));
  });

  void it("refuses things that are not a RootSync at all", () => {
    assertRejectedWith(parseRootSync("nope"), "must be an object");
    assertRejectedWith(parseRootSync({ ...rootSync({ git: publicGit }), kind: "RepoSync" }), "kind must be RootSync");
    assertRejectedWith(
      parseRootSync({ ...rootSync({ git: publicGit }), apiVersion: "v1" }),
      "apiVersion must be one of",
    );
    assertRejectedWith(parseRootSync(rootSync({ git: publicGit }, { name: "" })), "metadata.name is required");
  });
});

void describe("parseRepoSync", () => {
  void it("accepts a RepoSync and reads it as unstructured", () => {
    const result = parseRepoSync(repoSync({ git: publicGit }));
    assert.ok(result.ok);
    assert.equal(result.value.spec.sourceFormat, "unstructured");
  });

  void it("rejects RepoSyncs in config-management-system", () => {
    assertRejectedWith(
      parseRepoSync(repoSync({ git: publicGit }, { namespace: "config-management-system" })),
      "not allowed in",
    );
  });

  void it("refuses a RepoSync whose copied Git Secret name would be no DNS-1123 subdomain, in Config Sync's words", () => {
    // Config Sync's e2e TestControllerValidationErrors: ssh auth, a 253-character secretRef.name.
    const long = "a".repeat(253);
    const git = { repo: "https://github.com/test/test", auth: "ssh", secretRef: { name: long } };
    assert.deepEqual(messages(parseRepoSync(repoSync({ git }, { namespace: "test-ns", name: "repo-test" }))), [
      `The managed secret name "ns-reconciler-test-ns-repo-test-9-${long}" is invalid: must be no more than 253 characters. To fix it, update '.spec.git.secretRef.name'`,
    ]);
    // The name stops at 253 characters with the reconciler's prefix; a RootSync copies no Secret.
    const fits = "a".repeat(253 - "ns-reconciler-test-ns-".length);
    assert.ok(parseRepoSync(repoSync({ git: { ...git, secretRef: { name: fits } } }, { namespace: "test-ns" })).ok);
    assert.ok(parseRootSync(rootSync({ git })).ok);
  });

  void it("rejects a namespace and name together longer than 45 characters (the reconciler name would overflow)", () => {
    const ns = "n".repeat(30);
    assertRejectedWith(
      parseRepoSync(repoSync({ git: publicGit }, { namespace: ns, name: "s".repeat(16) })),
      "maximum combined length of RepoSync name and namespace is 45, but found 46",
    );
    assert.ok(parseRepoSync(repoSync({ git: publicGit }, { namespace: ns, name: "s".repeat(15) })).ok);
  });

  void it("refuses a name ending in .pending, the name of another sync's second ResourceGroup", () => {
    assertRejectedWith(
      parseRepoSync(repoSync({ git: publicGit }, { name: "team.pending" })),
      'may not end in ".pending"',
    );
    assert.ok(parseRepoSync(repoSync({ git: publicGit }, { name: "team.pending-x" })).ok);
  });

  void it("refuses sourceFormat hierarchy (KNV1061), which Config Sync's RepoSync CRD does not admit, and accepts unstructured", () => {
    assertRejectedWith(
      parseRepoSync(repoSync({ sourceFormat: "hierarchy", git: publicGit })),
      'spec.sourceFormat "hierarchy" is not supported on a RepoSync',
    );
    const result = parseRepoSync(repoSync({ sourceFormat: "unstructured", git: publicGit }));
    assert.ok(result.ok);
    assert.equal(result.value.spec.sourceFormat, "unstructured");
  });

  void it("refuses roleRefs, which only the namespace's admin may grant (Config Sync's RepoSync has none)", () => {
    assertRejectedWith(
      parseRepoSync(repoSync({ git: publicGit, override: { roleRefs: [{ kind: "ClusterRole", name: "admin" }] } })),
      "spec.override.roleRefs is not supported on a RepoSync",
    );
    assert.ok(parseRepoSync(repoSync({ git: publicGit, override: { roleRefs: [] } })).ok);
  });
});

void describe("parseSync", () => {
  void it("dispatches on kind and keeps status conditions it can read", () => {
    const withStatus = {
      ...repoSync({ git: publicGit }),
      status: { observedGeneration: 3, conditions: [{ type: "Syncing", status: "True" }, { bogus: true }] },
    };
    const result = parseSync(withStatus);
    assert.ok(result.ok);
    assert.equal(result.value.kind, "RepoSync");
    assert.equal(result.value.status?.observedGeneration, 3);
    assert.deepEqual(result.value.status?.conditions, [{ type: "Syncing", status: "True" }]);
  });

  void it("rejects unknown kinds", () => {
    assertRejectedWith(
      parseSync({ ...repoSync({ git: publicGit }), kind: "ConfigMap" }),
      "kind must be RootSync or RepoSync",
    );
  });
});

void describe("KNV1061 messages in Config Sync's words", () => {
  const sync = (kind: "RootSync" | "RepoSync", spec: Record<string, unknown>, metadata = {}): unknown =>
    kind === "RootSync" ? rootSync(spec, metadata) : repoSync(spec, metadata);
  const helm = { repo: "https://charts.example", chart: "web", auth: "none" };
  // Config Sync's sentence leads each message (its e2e tests and users match on it); driftless's detail may follow.
  const cases: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
    [
      "a missing git repo",
      { git: { auth: "none" } },
      {},
      `{kind}s must specify spec.git.repo when spec.sourceType is "git"`,
    ],
    [
      "a missing OCI image",
      { sourceType: "oci", oci: { auth: "none" } },
      {},
      `{kind}s must specify spec.oci.image when spec.sourceType is "oci"`,
    ],
    [
      "a missing helm repo",
      { sourceType: "helm", helm: { ...helm, repo: "" } },
      {},
      `{kind}s must specify spec.helm.repo when spec.sourceType is "helm"`,
    ],
    [
      "a missing helm chart",
      { sourceType: "helm", helm: { ...helm, chart: "" } },
      {},
      `{kind}s must specify spec.helm.chart when spec.sourceType is "helm"`,
    ],
    [
      "git auth needing a secretRef",
      { git: { ...publicGit, auth: "ssh" } },
      {},
      `{kind}s which specify spec.git.auth as one of "ssh", "cookiefile", "githubapp", or "token" must also specify spec.git.secretRef`,
    ],
    [
      "git auth none with a secretRef",
      { git: { ...publicGit, secretRef: { name: "creds" } } },
      {},
      `{kind}s which specify spec.git.auth as one of "none", "gcenode", or "gcpserviceaccount" must not specify spec.git.secretRef`,
    ],
    [
      "helm auth token without a secretRef",
      { sourceType: "helm", helm: { ...helm, auth: "token" } },
      {},
      `{kind}s which specify spec.helm.auth as one of "ssh", "cookiefile", "githubapp", or "token" must also specify spec.helm.secretRef`,
    ],
    [
      "helm auth none with a secretRef",
      { sourceType: "helm", helm: { ...helm, secretRef: { name: "creds" } } },
      {},
      `{kind}s which specify spec.helm.auth as one of "none", "gcenode", or "gcpserviceaccount" must not specify spec.helm.secretRef`,
    ],
    [
      "git auth k8sserviceaccount",
      { git: { ...publicGit, auth: "k8sserviceaccount" } },
      {},
      `{kind}s must specify spec.git.auth to be one of ssh,cookiefile,gcenode,token,none,gcpserviceaccount,githubapp`,
    ],
    [
      "gcpserviceaccount without an email",
      { git: { ...publicGit, auth: "gcpserviceaccount" } },
      {},
      `{kind}s which specify spec.git.auth as "gcpserviceaccount" must also specify spec.git.gcpServiceAccountEmail`,
    ],
    [
      "a valuesFileRef without a name",
      { sourceType: "helm", helm: { ...helm, valuesFileRefs: [{ dataKey: "v.yaml" }] } },
      {},
      `{kind}s must specify spec.helm.valuesFileRefs.name`,
    ],
    [
      "a negative quantity",
      { git: publicGit, override: { resources: [{ containerName: "reconciler", memoryRequest: "-1Mi" }] } },
      {},
      `{kind} field 'spec.override.resources.memoryRequest' must not be negative`,
    ],
    [
      "an unknown deletion propagation policy",
      { git: publicGit },
      { annotations: { "configsync.gke.io/deletion-propagation-policy": "Background" } },
      `{kind}s which specify the annotation "configsync.gke.io/deletion-propagation-policy" must use one of the values "Foreground" or "Orphan"`,
    ],
  ];
  for (const kind of ["RootSync", "RepoSync"] as const) {
    for (const [what, spec, metadata, words] of cases) {
      void it(`${kind}: ${what}`, () => {
        const expected = words.replaceAll("{kind}", kind);
        const found = messages(parseSync(sync(kind, spec, metadata)));
        assert.ok(
          found.some((m) => m.startsWith(expected)),
          `no message starts with ${JSON.stringify(expected)}: ${JSON.stringify(found)}`,
        );
      });
    }
  }

  void it("RootSync only: a Role roleRef without a namespace, and helm namespace with deployNamespace", () => {
    assert.ok(
      messages(
        parseRootSync(rootSync({ git: publicGit, override: { roleRefs: [{ kind: "Role", name: "edit" }] } })),
      ).some((m) =>
        m.startsWith("RootSyncs must specify 'spec.override.roleRefs.namespace' for role references with kind Role"),
      ),
    );
    assert.deepEqual(
      messages(
        parseRootSync(
          rootSync({
            sourceType: "helm",
            helm: { repo: "https://c", chart: "web", namespace: "a", deployNamespace: "b" },
          }),
        ),
      ),
      ["RootSyncs must specify only one of 'spec.helm.namespace' or 'spec.helm.deployNamespace'"],
    );
  });
});
