import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { parse, parseAllDocuments } from "yaml";
import { defaultRenderToolsDir } from "@driftless/sync/render";
import { hydrate } from "./hydrate.ts";
import { vet } from "./vet.ts";

const fixtures = join(import.meta.dirname, "..", "..", "..", "..", "test", "fixtures", "hierarchy");

async function files(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    found.set(relative(dir, path), await readFile(path, "utf8"));
  }
  return found;
}

void describe("driftless hydrate", () => {
  // repo.expected/ is what `nomos hydrate --no-api-server-check --source-format hierarchy` writes for
  // repo/ in its defaultcluster/ folder, byte for byte, and was read through by hand against the rules;
  // repo/ declares one Cluster, east, which selects the same objects, so east/ holds the same files.
  void it("writes a hierarchical source's objects, inherited into their namespaces, as nomos hydrate does", async (t) => {
    const out = await mkdtemp(join(tmpdir(), "driftless-hydrate-"));
    t.after(() => rm(out, { recursive: true, force: true }));
    const lines: string[] = [];
    const code = await hydrate(
      { dir: join(fixtures, "repo"), format: "hierarchy", output: out },
      (line) => void lines.push(line),
    );
    assert.equal(code, 0, lines.join("\n"));
    const perCluster = await files(join(fixtures, "repo.expected"));
    const expected = new Map(
      ["defaultcluster", "east"].flatMap((cluster) =>
        [...perCluster].map(([path, content]) => [join(cluster, path), content] as const),
      ),
    );
    const actual = await files(out);
    assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort());
    for (const [path, content] of expected) assert.equal(actual.get(path), content, path);
  });

  void it("writes a folder per cluster the source names, selectors evaluated for each, as nomos lays them out", async (t) => {
    const repo = await mkdtemp(join(tmpdir(), "driftless-hydrate-clusters-"));
    t.after(() => rm(repo, { recursive: true, force: true }));
    const write = async (path: string, text: string): Promise<void> => {
      await mkdir(dirname(join(repo, path)), { recursive: true });
      await writeFile(join(repo, path), text);
    };
    await write(
      "system/repo.yaml",
      "apiVersion: configmanagement.gke.io/v1\nkind: Repo\nmetadata: {name: repo}\nspec: {version: 1.0.0}\n",
    );
    await write(
      "clusterregistry/clusters.yaml",
      [
        "apiVersion: clusterregistry.k8s.io/v1alpha1\nkind: Cluster\nmetadata: {name: prod-1, labels: {env: prod}}",
        "apiVersion: clusterregistry.k8s.io/v1alpha1\nkind: Cluster\nmetadata: {name: dev-1, labels: {env: dev}}",
        "apiVersion: configmanagement.gke.io/v1\nkind: ClusterSelector\nmetadata: {name: prod}\nspec: {selector: {matchLabels: {env: prod}}}",
      ].join("\n---\n"),
    );
    await write("namespaces/web/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n");
    await write(
      "namespaces/web/prod.yaml",
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: prod-only, annotations: {configmanagement.gke.io/cluster-selector: prod}}\n",
    );
    await write(
      "namespaces/web/named.yaml",
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: named, annotations: {configsync.gke.io/cluster-name-selector: 'dev-1,canary'}}\n",
    );
    const out = await mkdtemp(join(tmpdir(), "driftless-hydrate-out-"));
    t.after(() => rm(out, { recursive: true, force: true }));
    assert.equal(await hydrate({ dir: repo, format: "hierarchy", output: out }, () => undefined), 0);
    assert.deepEqual([...(await files(out)).keys()].sort(), [
      "canary/namespace_web.yaml",
      "canary/web/configmap_named.yaml",
      "defaultcluster/namespace_web.yaml",
      "dev-1/namespace_web.yaml",
      "dev-1/web/configmap_named.yaml",
      "prod-1/namespace_web.yaml",
      "prod-1/web/configmap_prod-only.yaml",
    ]);
    // Selector annotations are the reconciler's instructions, not part of the object (nomos drops them).
    assert.doesNotMatch((await files(out)).get("dev-1/web/configmap_named.yaml") ?? "", /selector/);

    const one = await mkdtemp(join(tmpdir(), "driftless-hydrate-one-"));
    t.after(() => rm(one, { recursive: true, force: true }));
    assert.equal(
      await hydrate({ dir: repo, format: "hierarchy", output: one, clusters: ["canary"] }, () => undefined),
      0,
    );
    assert.deepEqual([...(await files(one)).keys()].sort(), ["namespace_web.yaml", "web/configmap_named.yaml"]);

    // As nomos, --clusters keeps only the clusters the source declares: one left is written at the top,
    // none left writes nothing (not even the folder).
    const known = await mkdtemp(join(tmpdir(), "driftless-hydrate-known-"));
    t.after(() => rm(known, { recursive: true, force: true }));
    const options = { dir: repo, format: "hierarchy", output: known, clusters: ["prod-1", "unknown-cluster"] } as const;
    assert.equal(await hydrate(options, () => undefined), 0);
    assert.deepEqual([...(await files(known)).keys()].sort(), ["namespace_web.yaml", "web/configmap_prod-only.yaml"]);
    const none = join(known, "none");
    assert.equal(await hydrate({ ...options, output: none, clusters: ["unknown-cluster"] }, () => undefined), 0);
    await assert.rejects(readdir(none), { code: "ENOENT" });
  });

  // What nomos v1.22 `hydrate --no-api-server-check --source-format unstructured` writes for this source.
  void it("lower-cases cluster folders as nomos does; clusters whose names differ only in case share one, where a shared file name takes the group", async (t) => {
    const repo = await mkdtemp(join(tmpdir(), "driftless-hydrate-case-"));
    t.after(() => rm(repo, { recursive: true, force: true }));
    await writeFile(
      join(repo, "cm.yaml"),
      [
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: shop, annotations: {configsync.gke.io/cluster-name-selector: 'East,east,Dev'}}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: shop}",
      ].join("\n---\n"),
    );
    const out = await mkdtemp(join(tmpdir(), "driftless-hydrate-case-out-"));
    t.after(() => rm(out, { recursive: true, force: true }));
    assert.equal(await hydrate({ dir: repo, format: "unstructured", output: out }, () => undefined), 0);
    const written = await files(out);
    assert.deepEqual([...written.keys()].sort(), [
      "defaultcluster/shop/configmap_other.yaml",
      "dev/shop/configmap_other.yaml",
      "dev/shop/configmap_x.yaml",
      "east/shop/configmap._other.yaml",
      "east/shop/configmap._x.yaml",
    ]);
    // Both clusters' ConfigMap x, one after the other, as nomos writes them.
    assert.equal(parseAllDocuments(written.get("east/shop/configmap._x.yaml") ?? "").length, 2);
  });

  // What nomos v1.22 `hydrate --no-api-server-check --source-format unstructured` writes for this source: nomos
  // selects for the cluster without a name as `defaultcluster`, and --clusters names it so.
  void it("selects for the cluster without a name as defaultcluster, and --clusters defaultcluster writes it, as nomos", async (t) => {
    const repo = await mkdtemp(join(tmpdir(), "driftless-hydrate-default-"));
    t.after(() => rm(repo, { recursive: true, force: true }));
    await writeFile(
      join(repo, "cm.yaml"),
      [
        "apiVersion: clusterregistry.k8s.io/v1alpha1\nkind: Cluster\nmetadata: {name: east}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: shop, annotations: {configsync.gke.io/cluster-name-selector: 'defaultcluster'}}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: shop}",
      ].join("\n---\n"),
    );
    const out = await mkdtemp(join(tmpdir(), "driftless-hydrate-default-out-"));
    t.after(() => rm(out, { recursive: true, force: true }));
    assert.equal(await hydrate({ dir: repo, format: "unstructured", output: out }, () => undefined), 0);
    // The selector also names a cluster `defaultcluster`, which shares the folder: a shared file takes the group.
    assert.deepEqual([...(await files(out)).keys()].sort(), [
      "defaultcluster/shop/configmap._other.yaml",
      "defaultcluster/shop/configmap._x.yaml",
      "east/shop/configmap_other.yaml",
    ]);

    const only = await mkdtemp(join(tmpdir(), "driftless-hydrate-default-only-"));
    t.after(() => rm(only, { recursive: true, force: true }));
    const east = { dir: repo, format: "unstructured", output: only, clusters: ["east", "defaultcluster"] } as const;
    assert.equal(await hydrate(east, () => undefined), 0);
    assert.deepEqual([...(await files(only)).keys()].sort(), [
      "defaultcluster/shop/configmap._other.yaml",
      "defaultcluster/shop/configmap._x.yaml",
      "east/shop/configmap_other.yaml",
    ]);
  });

  // As nomos v1.22 `hydrate --no-api-server-check` does for this fixture: exit 1, defaultcluster/ written.
  void it("still writes the clusters that passed when one fails, with its errors, and exits 1", async (t) => {
    const out = await mkdtemp(join(tmpdir(), "driftless-hydrate-partial-"));
    t.after(() => rm(out, { recursive: true, force: true }));
    const lines: string[] = [];
    const dir = join(fixtures, "errors", "knv1029-cluster-specific-collision");
    const code = await hydrate({ dir, format: "hierarchy", output: out }, (line) => void lines.push(line));
    assert.equal(code, 1, lines.join("\n"));
    assert.match(lines[0] ?? "", /^KNV1029: for cluster "staging": /);
    assert.deepEqual([...(await files(out)).keys()], ["defaultcluster/clusterrole_viewer.yaml"]);
  });

  // What nomos v1.22 `hydrate --no-api-server-check --source-format unstructured` writes for a Deployment as
  // `kubectl create deployment --dry-run=client -o yaml` prints it: --flat as declared, --output without both.
  void it("keeps a declared creationTimestamp: null and status: {} in a --flat YAML file, and drops them from --output files and JSON, as nomos", async (t) => {
    const repo = await mkdtemp(join(tmpdir(), "driftless-hydrate-kubectl-"));
    t.after(() => rm(repo, { recursive: true, force: true }));
    await writeFile(
      join(repo, "deploy.yaml"),
      [
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, creationTimestamp: null}",
        "spec:\n  selector: {matchLabels: {app: web}}\n  strategy: {}",
        "  template:\n    metadata: {labels: {app: web}, creationTimestamp: null}\n    spec: {containers: [{name: c, image: x}]}",
        "status: {}\n",
      ].join("\n"),
    );
    const written = await mkdtemp(join(tmpdir(), "driftless-hydrate-kubectl-out-"));
    t.after(() => rm(written, { recursive: true, force: true }));
    const flat = join(written, "flat.yaml");
    assert.equal(await hydrate({ dir: repo, format: "unstructured", flat }, () => undefined), 0);
    const flatObject = parse(await readFile(flat, "utf8")) as { metadata: object; status?: object };
    assert.deepEqual(flatObject.metadata, { creationTimestamp: null, name: "web", namespace: "shop" });
    assert.deepEqual(flatObject.status, {});
    // nomos's --format json, --flat too, drops them as its per-object files do.
    const flatJson = join(written, "flat.json");
    assert.equal(
      await hydrate({ dir: repo, format: "unstructured", flat: flatJson, outputFormat: "json" }, () => undefined),
      0,
    );
    const list = JSON.parse(await readFile(flatJson, "utf8")) as { items: { metadata: object; status?: object }[] };
    assert.deepEqual(list.items[0]?.metadata, { name: "web", namespace: "shop" });
    assert.equal(list.items[0]?.status, undefined);
    const out = join(written, "out");
    assert.equal(await hydrate({ dir: repo, format: "unstructured", output: out }, () => undefined), 0);
    const file = parse(await readFile(join(out, "shop", "deployment_web.yaml"), "utf8")) as typeof flatObject;
    assert.deepEqual(file.metadata, { name: "web", namespace: "shop" });
    assert.equal(file.status, undefined);
  });

  // What nomos v1.22 `hydrate --no-api-server-check --source-format unstructured` writes: it sets labels and
  // annotations again after removing Config Sync's, so an empty or null map is no field.
  void it("writes no empty or null labels and annotations, as nomos", async (t) => {
    const repo = await mkdtemp(join(tmpdir(), "driftless-hydrate-empty-maps-"));
    t.after(() => rm(repo, { recursive: true, force: true }));
    await writeFile(
      join(repo, "cm.yaml"),
      [
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: empty, namespace: shop, labels: {}, annotations: {}}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nulls, namespace: shop, labels: null, annotations: null}",
      ].join("\n---\n"),
    );
    const written = await mkdtemp(join(tmpdir(), "driftless-hydrate-empty-maps-out-"));
    t.after(() => rm(written, { recursive: true, force: true }));
    const flat = join(written, "flat.yaml");
    assert.equal(await hydrate({ dir: repo, format: "unstructured", flat }, () => undefined), 0);
    const objects = parseAllDocuments(await readFile(flat, "utf8")).map((d) => d.toJS() as { metadata: object });
    assert.deepEqual(
      objects.map((o) => o.metadata),
      [
        { name: "empty", namespace: "shop" },
        { name: "nulls", namespace: "shop" },
      ],
    );
  });

  // As nomos v1.22 `hydrate --no-api-server-check --flat` does when every cluster fails: exit 1, the file written
  // empty (an empty List with --format json).
  void it("writes an empty --flat file when every cluster fails, and exits 1", async (t) => {
    const out = await mkdtemp(join(tmpdir(), "driftless-hydrate-flat-failed-"));
    t.after(() => rm(out, { recursive: true, force: true }));
    const dir = join(fixtures, "many-errors");
    const yaml = join(out, "flat.yaml");
    assert.equal(await hydrate({ dir, format: "hierarchy", flat: yaml }, () => undefined), 1);
    assert.equal(await readFile(yaml, "utf8"), "");
    const json = join(out, "flat.json");
    assert.equal(await hydrate({ dir, format: "hierarchy", flat: json, outputFormat: "json" }, () => undefined), 1);
    assert.equal(await readFile(json, "utf8"), '{\n\t"apiVersion": "v1",\n\t"items": [],\n\t"kind": "List"\n}');
  });

  void it("refuses a cluster name from the source that would lead out of --output", async (t) => {
    const base = await mkdtemp(join(tmpdir(), "driftless-hydrate-escape-"));
    t.after(() => rm(base, { recursive: true, force: true }));
    const repo = join(base, "repo");
    await mkdir(join(repo, "system"), { recursive: true });
    await mkdir(join(repo, "cluster"), { recursive: true });
    await writeFile(
      join(repo, "system", "repo.yaml"),
      "apiVersion: configmanagement.gke.io/v1\nkind: Repo\nmetadata: {name: repo}\nspec: {version: 1.0.0}\n",
    );
    await writeFile(
      join(repo, "cluster", "role.yaml"),
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\n  annotations: {configsync.gke.io/cluster-name-selector: ../escaped}\nrules: []\n",
    );
    const lines: string[] = [];
    const code = await hydrate(
      { dir: repo, format: "hierarchy", output: join(base, "out") },
      (line) => void lines.push(line),
    );
    assert.equal(code, 1, lines.join("\n"));
    assert.match(lines.join("\n"), /cluster name "..\/escaped"/);
    assert.deepEqual((await readdir(base)).sort(), ["repo"], "nothing was written beside --output");
  });

  void it("writes no file outside --output whatever an object's kind, name, namespace or group says", async (t) => {
    const base = await mkdtemp(join(tmpdir(), "driftless-hydrate-kind-"));
    t.after(() => rm(base, { recursive: true, force: true }));
    const repo = join(base, "repo");
    await mkdir(repo, { recursive: true });
    const hostile = [
      "apiVersion: x.example/v1\nkind: ../../../escaped-kind\nmetadata: {name: a}\n",
      "apiVersion: x.example/v1\nkind: Widget\nmetadata: {name: ../../../escaped-name}\n",
      "apiVersion: x.example/v1\nkind: Widget\nmetadata: {name: b, namespace: ../../../escaped-namespace}\n",
      "apiVersion: ../../../escaped-group/v1\nkind: Widget\nmetadata: {name: c}\n",
      "apiVersion: ../v1\nkind: Widget\nmetadata: {name: d}\n---\napiVersion: other.example/v1\nkind: Widget\nmetadata: {name: d}\n",
    ];
    for (const [i, manifest] of hostile.entries()) {
      const dir = join(repo, `case-${i}`);
      await mkdir(dir);
      await writeFile(join(dir, "object.yaml"), manifest);
      const out = join(base, `out-${i}`, "nested", "deeper");
      const lines: string[] = [];
      const code = await hydrate({ dir, format: "unstructured", output: out }, (line) => void lines.push(line));
      const outside = (await readdir(base, { recursive: true })).filter(
        (path) => !path.startsWith("repo") && !path.startsWith(`out-${i}/nested/deeper`) && path.includes("escaped"),
      );
      assert.deepEqual(outside, [], `case ${i} wrote outside --output (exit ${code}: ${lines.join("; ")})`);
      if (code === 0) assert.ok((await files(out)).size > 0, "an accepted object is written inside --output");
      else assert.match(lines.join("\n"), /cannot be part of a file name|KNV/, lines.join("\n"));
    }
  });

  void it("names an object that cannot be a file name on one line, whatever its file's name holds", async (t) => {
    const base = await mkdtemp(join(tmpdir(), "driftless-hydrate-line-"));
    t.after(() => rm(base, { recursive: true, force: true }));
    const repo = join(base, "repo");
    await mkdir(repo, { recursive: true });
    await writeFile(
      join(repo, "a.yaml\n\nhydrate: done\nx.yaml"),
      "apiVersion: x.example/v1\nkind: ../Up\nmetadata: {name: a}\n",
    );
    const lines: string[] = [];
    const code = await hydrate(
      { dir: repo, format: "unstructured", output: join(base, "out") },
      (line) => void lines.push(line),
    );
    assert.equal(code, 1, lines.join("\n"));
    const refusal = lines.find((line) => line.includes("cannot be part of a file name")) ?? lines.join(" | ");
    assert.match(refusal, /^a\.yaml\\x0a\\x0ahydrate: done\\x0ax\.yaml: kind "\.\.\/Up" cannot be part/);
    assert.ok(!refusal.includes("\n"), refusal);
  });

  void it("writes a declared special Namespace with deletion: detach, as nomos hydrate does and the reconciler applies it", async (t) => {
    const repo = await mkdtemp(join(tmpdir(), "driftless-hydrate-special-"));
    t.after(() => rm(repo, { recursive: true, force: true }));
    await writeFile(join(repo, "default.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n");
    await writeFile(join(repo, "team.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n");
    const out = join(repo, "out");
    const lines: string[] = [];
    assert.equal(await hydrate({ dir: repo, format: "unstructured", output: out }, (l) => void lines.push(l)), 0);
    const written = await files(out);
    assert.equal(
      written.get("namespace_default.yaml"),
      "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  annotations:\n    client.lifecycle.config.k8s.io/deletion: detach\n  name: default\n",
    );
    assert.equal(written.get("namespace_team.yaml"), "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n");
  });

  void it("prints nothing and exits 1 with the errors of an invalid source", async () => {
    const lines: string[] = [];
    const code = await hydrate(
      { dir: join(fixtures, "errors", "knv1020-namespace-name-not-directory"), format: "hierarchy" },
      (line) => void lines.push(line),
    );
    assert.equal(code, 1);
    assert.match(lines.join("\n"), /^KNV1020: namespaces\/web\/namespace\.yaml: /);
  });
});

void describe("driftless vet", () => {
  void it("reports each hierarchy fixture's error with the code its directory is named after and the file", async () => {
    for (const name of (await readdir(join(fixtures, "errors"))).sort()) {
      const code = name.split("-")[0]?.toUpperCase() ?? "";
      const lines: string[] = [];
      const exit = await vet(
        join(fixtures, "errors", name),
        { format: "hierarchy", scope: { kind: "RootSync" } },
        (line) => void lines.push(line),
      );
      assert.equal(exit, 1, name);
      const errors = lines.filter((l) => l.startsWith("KNV"));
      assert.ok(errors.length > 0 && errors.every((l) => l.startsWith(`${code}: `)), `${name}:\n${lines.join("\n")}`);
      assert.ok(
        errors.every((l) => / \((system|cluster|clusterregistry|namespaces)[/)]/.test(l)),
        `${name}: no path`,
      );
    }
  });

  void it("passes the valid hierarchy fixture", async () => {
    const lines: string[] = [];
    const exit = await vet(join(fixtures, "repo"), { format: "hierarchy", scope: { kind: "RootSync" } }, (line) => {
      lines.push(line);
    });
    assert.equal(exit, 0, lines.join("\n"));
    assert.match(
      lines.join("\n"),
      /22 object\(s\), 0 local-config skipped, 0 error\(s\)[^\n]*\n✅ No validation issues found\.$/,
    );
  });

  void it("runs the duplicate check the reconciler runs (KNV1029), in an unstructured source too", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "driftless-vet-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same, namespace: default}\n";
    await writeFile(join(dir, "a.yaml"), cm);
    await writeFile(join(dir, "b.yaml"), cm);
    const lines: string[] = [];
    const exit = await vet(
      dir,
      { format: "unstructured", scope: { kind: "RootSync" } },
      (line) => void lines.push(line),
    );
    assert.equal(exit, 1);
    assert.match(lines.join("\n"), /KNV1029: .*a\.yaml, b\.yaml/);
  });
});

void describe("driftless hydrate to stdout", () => {
  // A C1 control (CSI, U+009B) in a value from the repository: the terminal would act on it raw.
  void it("escapes C1 controls and DEL from the repository, as YAML that reads back to the same objects", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "driftless-hydrate-c1-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const value = "a\u009b2J\u009d0;pwned\u0007b\u007f";
    const cm = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c1", namespace: "default" },
      data: { k: value },
    };
    await writeFile(join(dir, "cm.yaml"), JSON.stringify(cm));
    await writeFile(
      join(dir, "plain.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: default}\ndata: {k: v}\n",
    );
    const main = join(import.meta.dirname, "..", "main.ts");
    const { stdout } = await promisify(execFile)(process.execPath, [main, "hydrate", dir]);
    assert.doesNotMatch(stdout.replaceAll("\n", ""), /[\x00-\x09\x0b-\x1f\x7f-\x9f]/, JSON.stringify(stdout));
    assert.ok(stdout.includes("\\x9b2J\\x9d0;pwned"), stdout);
    const docs = parseAllDocuments(stdout).map((d) => d.toJS() as { metadata: { name: string }; data: { k: string } });
    assert.deepEqual(
      docs.map((d) => [d.metadata.name, d.data.k]),
      [
        ["c1", value],
        ["plain", "v"],
      ],
    );
    // An object with no control characters is written as before.
    assert.ok(
      stdout.endsWith(
        "---\napiVersion: v1\ndata:\n  k: v\nkind: ConfigMap\nmetadata:\n  name: plain\n  namespace: default\n",
      ),
      stdout,
    );
  });

  // YAML 1.1 reads NEL, LS and PS as line breaks: written raw, go-yaml (kubectl, Config Sync, kustomize) could
  // not read the file back (`could not find expected ':'`) or folded them; nomos quotes them. kustomize is the
  // go-yaml reader here.
  void it("writes strings holding NEL, LS or PS as escapes that go-yaml reads", async (t) => {
    const repo = await mkdtemp(join(tmpdir(), "driftless-hydrate-breaks-"));
    t.after(() => rm(repo, { recursive: true, force: true }));
    const data = { ls: "a\u2028b", ps: "\u2029", nel: "c\u0085d", plain: "e f" };
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "shop" }, data };
    await writeFile(join(repo, "cm.json"), JSON.stringify(cm));
    const out = join(repo, "out");
    assert.equal(await hydrate({ dir: repo, format: "unstructured", output: out }, () => undefined), 0);
    const written = await readFile(join(out, "shop", "configmap_c.yaml"), "utf8");
    assert.doesNotMatch(written, /[\u0085\u2028\u2029]/);
    assert.deepEqual((parse(written) as { data: unknown }).data, data);
    await writeFile(join(out, "kustomization.yaml"), "resources: [shop/configmap_c.yaml]\n");
    const kustomize = join(
      defaultRenderToolsDir() ?? assert.fail("no render tools: run npm test's setup"),
      "kustomize",
    );
    await promisify(execFile)(kustomize, ["build", out]);
  });
});
