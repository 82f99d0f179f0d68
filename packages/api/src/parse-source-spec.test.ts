import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRepoSync, parseRootSync, type ParseResult } from "./parse-sync.ts";

const meta = { name: "root-sync", namespace: "config-management-system" };

function rootSync(spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: "configsync.gke.io/v1beta1", kind: "RootSync", metadata: meta, spec };
}

function problems<T>(result: ParseResult<T>): string[] {
  return result.ok ? [] : result.errors.map((e) => e.message);
}

void describe("spec.oci", () => {
  void it("is read with Config Sync's defaults (dir ., period 15s, auth none)", () => {
    const result = parseRootSync(rootSync({ sourceType: "oci", oci: { image: "registry.example/config:v1" } }));
    assert.ok(result.ok, problems(result).join("; "));
    assert.deepEqual(result.value.spec.oci, {
      image: "registry.example/config:v1",
      dir: ".",
      period: "15s",
      auth: "none",
    });
  });

  void it("takes basic credentials from a Secret with auth token, and requires the Secret", () => {
    const ok = parseRootSync(
      rootSync({ sourceType: "oci", oci: { image: "r/x:1", auth: "token", secretRef: { name: "creds" } } }),
    );
    assert.ok(ok.ok);
    assert.deepEqual(ok.value.spec.oci?.secretRef, { name: "creds" });
    const missing = problems(parseRootSync(rootSync({ sourceType: "oci", oci: { image: "r/x:1", auth: "token" } })));
    assert.ok(
      missing.some((m) =>
        m.startsWith(`RootSyncs which specify spec.oci.auth as "token" must also specify spec.oci.secretRef`),
      ),
      missing.join("; "),
    );
  });

  void it("refuses the Google-only auth types and names the alternative", () => {
    for (const auth of ["gcenode", "gcpserviceaccount", "k8sserviceaccount"]) {
      const found = problems(parseRootSync(rootSync({ sourceType: "oci", oci: { image: "r/x:1", auth } })));
      assert.ok(
        found.some((m) => m.includes(`spec.oci.auth "${auth}"`) && m.includes(`use auth "token"`)),
        found.join("; "),
      );
    }
  });
});

void describe("spec.helm", () => {
  const helm = { repo: "https://charts.example", chart: "web", auth: "none" };

  void it("is read with Config Sync's defaults (period 1h, values files from values.yaml)", () => {
    const result = parseRootSync(
      rootSync({ sourceType: "helm", helm: { ...helm, version: "^1.2", valuesFileRefs: [{ name: "v" }] } }),
    );
    assert.ok(result.ok, problems(result).join("; "));
    assert.deepEqual(result.value.spec.helm, {
      ...helm,
      version: "^1.2",
      valuesFileRefs: [{ name: "v", dataKey: "values.yaml" }],
      period: "1h",
    });
  });

  void it("refuses a chart path, a repo that is no URL, and both namespace and deployNamespace", () => {
    const found = problems(
      parseRootSync(
        rootSync({
          sourceType: "helm",
          helm: { ...helm, repo: "charts.example", chart: "a/b", namespace: "x", deployNamespace: "y" },
        }),
      ),
    );
    for (const fragment of [
      "must not contain a slash (/)",
      "https://, http:// or oci://",
      "RootSyncs must specify only one of 'spec.helm.namespace' or 'spec.helm.deployNamespace'",
    ])
      assert.ok(
        found.some((m) => m.includes(fragment)),
        `${fragment}: ${found.join("; ")}`,
      );
  });

  void it("refuses a chart of the form <repo>/<chart> in Config Sync's words (KNV1061), on a RootSync and a RepoSync", () => {
    const chart = "charts/web";
    const root = parseRootSync(rootSync({ sourceType: "helm", helm: { ...helm, chart } }));
    assert.ok(!root.ok);
    assert.deepEqual(
      root.errors.map((e) => `${e.code}: ${e.message}`),
      ["KNV1061: RootSync field spec.helm.chart must not contain a slash (/)"],
    );
    const repo = parseRepoSync({
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace: "shop" },
      spec: { sourceType: "helm", helm: { ...helm, chart } },
    });
    assert.deepEqual(problems(repo), ["RepoSync field spec.helm.chart must not contain a slash (/)"]);
  });

  void it("refuses . and .. as chart names (they would name a folder outside the chart's)", () => {
    for (const chart of [".", ".."]) {
      const found = problems(parseRootSync(rootSync({ sourceType: "helm", helm: { ...helm, chart } })));
      assert.ok(
        found.some((m) => m.includes("not a path")),
        `${chart}: ${found.join("; ")}`,
      );
    }
  });

  void it("refuses a releaseName or chart helm would read as a flag (--set-file=…, --post-renderer=…)", () => {
    const cases: Record<string, unknown>[] = [
      { releaseName: "--set-file=leak=/etc/hostname" },
      { releaseName: "--post-renderer=/bin/sh" },
      { releaseName: "-f" },
      { releaseName: "Upper" },
      { releaseName: "r".repeat(54) },
      { chart: "--kubeconfig=/tmp/x" },
      { chart: "-web" },
      { namespace: "--namespace=x" },
    ];
    for (const extra of cases) {
      const found = problems(parseRootSync(rootSync({ sourceType: "helm", helm: { ...helm, ...extra } })));
      const [field] = Object.keys(extra);
      assert.ok(
        found.some((m) => m.includes(`spec.helm.${field} must be`)),
        `${JSON.stringify(extra)}: ${found.join("; ")}`,
      );
    }
  });

  void it("accepts helm's own release names (dots, dashes, 53 characters) and chart names with dots and underscores", () => {
    for (const extra of [
      { releaseName: "web" },
      { releaseName: "my-release.v2" },
      { releaseName: "r".repeat(53) },
      { chart: "my_chart.v2" },
    ]) {
      const result = parseRootSync(rootSync({ sourceType: "helm", helm: { ...helm, ...extra } }));
      assert.ok(result.ok, `${JSON.stringify(extra)}: ${problems(result).join("; ")}`);
    }
  });

  void it("ignores namespace on a RepoSync, whose chart is released into its own namespace", () => {
    const result = parseRepoSync({
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace: "shop" },
      spec: { sourceType: "helm", helm: { ...helm, namespace: "elsewhere" } },
    });
    assert.ok(result.ok, problems(result).join("; "));
    assert.equal((result.value.spec.helm as { namespace?: string }).namespace, undefined);
  });
});
