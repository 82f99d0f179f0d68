import assert from "node:assert/strict";
import { symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { declareObjects } from "./declare.ts";
import type { KindInfo } from "./kinds.ts";
import { readManifests } from "./read-manifests.ts";
import { readSource } from "./read-source.ts";
import type { SourceResult } from "./result.ts";
import { configMap, fakeDiscovery, withTree } from "./testing.ts";

const root = { kind: "RootSync" } as const;
const repo = { kind: "RepoSync", namespace: "team-a" } as const;

function complete(result: SourceResult) {
  assert.ok(result.complete, result.errors.map((e) => e.message).join("\n"));
  return result;
}

function failed(result: SourceResult) {
  assert.ok(!result.complete, "expected the source to fail");
  return result;
}

const widgetCrd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true}]
`;

void describe("readSource", () => {
  void it("declares every object with its id, source path, hash, resource and defaulted namespace", async () => {
    await withTree(
      {
        "apps/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 1}
---
${configMap("settings")}`,
        "cluster/ns.json": JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } }),
      },
      async (dir) => {
        const result = complete(await readSource(dir, { scope: root, kinds: fakeDiscovery() }));
        assert.equal(result.isEmpty, false);
        assert.equal(result.fileCount, 2);
        assert.deepEqual(
          result.objects.map((o) => [o.sourcePath, o.id, o.resource, o.namespaced]),
          [
            [
              "apps/web.yaml",
              { group: "apps", kind: "Deployment", namespace: "shop", name: "web" },
              "deployments",
              true,
            ],
            [
              "apps/web.yaml",
              { group: "", kind: "ConfigMap", namespace: "default", name: "settings" },
              "configmaps",
              true,
            ],
            ["cluster/ns.json", { group: "", kind: "Namespace", namespace: "", name: "shop" }, "namespaces", false],
          ],
        );
        const settings = result.objects[1];
        assert.deepEqual(settings?.metadata, { name: "settings", namespace: "default" });
        assert.deepEqual(settings?.raw["metadata"], { name: "settings", namespace: "default" });
        assert.match(settings?.sourceHash ?? "", /^[0-9a-f]{16}$/);
        assert.deepEqual(result.objects[2]?.metadata, { name: "shop" });
      },
    );
  });

  void it("hashes content, not formatting: the same object written differently has the same sourceHash", async () => {
    const yaml =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: default\ndata:\n  a: '1'\n  b: '2'\n";
    const json = JSON.stringify({
      data: { b: "2", a: "1" },
      metadata: { namespace: "default", name: "c" },
      kind: "ConfigMap",
      apiVersion: "v1",
    });
    const [fromYaml, fromJson, defaulted] = await Promise.all(
      (
        [{ "c.yaml": yaml }, { "c.json": json }, { "c.yaml": yaml.replace("  namespace: default\n", "") }] as Record<
          string,
          string
        >[]
      ).map((files) =>
        withTree(
          files,
          async (dir) =>
            complete(await readSource(dir, { scope: root, kinds: fakeDiscovery() })).objects[0]?.sourceHash,
        ),
      ),
    );
    assert.ok(fromYaml);
    assert.equal(fromJson, fromYaml);
    // The hash covers the object as applied, namespace included.
    assert.equal(defaulted, fromYaml);
  });

  void it("distinguishes an empty source (complete, isEmpty) from a failed one (no objects at all)", async () => {
    await withTree(
      {
        "README.md": "# nothing\n",
        "fn.yaml":
          "apiVersion: fn/v1\nkind: X\nmetadata:\n  annotations: {config.kubernetes.io/local-config: 'true'}\n",
      },
      async (dir) => {
        const result = complete(await readSource(dir, { scope: root, kinds: fakeDiscovery() }));
        assert.equal(result.isEmpty, true);
        assert.deepEqual(result.objects, []);
        assert.equal(result.localConfigSkipped, 1);
      },
    );
    await withTree({ "broken.yaml": "kind: [\n", "ok.yaml": configMap("ok") }, async (dir) => {
      const result = failed(await readSource(dir, { scope: root, kinds: fakeDiscovery() }));
      assert.equal(result.isEmpty, false);
      assert.equal("objects" in result, false);
      assert.deepEqual(
        result.partialObjects.map((o) => o.id.name),
        ["ok"],
      );
      assert.deepEqual(
        result.errors.map((e) => [e.code, e.sourcePaths]),
        [["KNV1006", ["broken.yaml"]]],
      );
    });
  });

  void it("fails when the directory does not exist, rather than reading as empty", async () => {
    await withTree({}, async (dir) => {
      const result = failed(await readSource(`${dir}/missing`, { scope: root, kinds: fakeDiscovery() }));
      assert.equal(result.errors[0].code, "KNV2004");
    });
  });

  void it("reports unknown kinds as stalled (KNV1021), asking discovery once per kind", async () => {
    await withTree(
      {
        "a.yaml":
          "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: a}\n---\napiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: b}\n",
        "b.yaml": configMap("c") + "---\n" + configMap("d"),
      },
      async (dir) => {
        const discovery = fakeDiscovery();
        const result = failed(await readSource(dir, { scope: root, kinds: discovery }));
        assert.deepEqual(discovery.calls.sort(), ["example.com/v1/Gizmo", "v1/ConfigMap"]);
        assert.deepEqual(
          result.errors.map((e) => [e.code, e.errorClass, e.resources[0]?.name]),
          [
            ["KNV1021", "stalled", "a"],
            ["KNV1021", "stalled", "b"],
          ],
        );
        assert.match(
          result.errors[0].message,
          /^a\.yaml: Gizmo "a": No CustomResourceDefinition is defined for the type "Gizmo\.example\.com" in the cluster, nor in the source \(example\.com\/v1\)/,
        );
      },
    );
  });

  void it("resolves custom resources from a CRD declared in the same source, before the cluster has it", async () => {
    await withTree(
      { "crd.yaml": widgetCrd, "w.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n" },
      async (dir) => {
        const discovery = fakeDiscovery();
        const result = complete(await readSource(dir, { scope: root, kinds: discovery }));
        const widget = result.objects.find((o) => o.kind === "Widget");
        assert.equal(widget?.resource, "widgets");
        assert.equal(widget?.id.namespace, "default");
        assert.ok(!discovery.calls.includes("example.com/v1/Widget"));
      },
    );
  });

  void it("puts a RepoSync's objects in its namespace and refuses others (KNV1058)", async () => {
    await withTree(
      {
        "a.yaml": configMap("mine"),
        "b.yaml": configMap("explicit", "team-a"),
        "c.yaml": configMap("theirs", "team-b"),
        "d.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n",
      },
      async (dir) => {
        const result = failed(await readSource(dir, { scope: repo, kinds: fakeDiscovery() }));
        assert.deepEqual(
          result.partialObjects.map((o) => o.id.namespace),
          ["team-a", "team-a"],
        );
        assert.deepEqual(
          result.errors.map((e) => [e.code, e.sourcePaths[0]]),
          [
            ["KNV1058", "c.yaml"],
            ["KNV1058", "d.yaml"],
          ],
        );
      },
    );
  });

  void it("finds duplicates after namespaces are defaulted (KNV1029), naming every file", async () => {
    await withTree(
      { "a.yaml": configMap("same"), "b/c.yaml": configMap("same", "team-a"), "d.yaml": configMap("other") },
      async (dir) => {
        const result = failed(await readSource(dir, { scope: repo, kinds: fakeDiscovery() }));
        assert.equal(result.errors.length, 1);
        const [error] = result.errors;
        assert.equal(error.code, "KNV1029");
        assert.deepEqual(error.sourcePaths, ["a.yaml", "b/c.yaml"]);
        assert.match(error.message, /ConfigMap "team-a\/same" is declared 2 times, in a\.yaml, b\/c\.yaml/);
      },
    );
  });

  void it("reads a symlinked file as its target's extension says, as Config Sync's reconciler reads the resolved path", async () => {
    await withTree({ "real/cm.yaml": configMap("linked"), "notes.txt": configMap("from-text") }, async (dir) => {
      // A .json name on a YAML file is still YAML; a .yaml name on a .txt file is no manifest.
      await symlink("real/cm.yaml", join(dir, "alias.json"));
      await symlink("notes.txt", join(dir, "notes.yaml"));
      const result = await readManifests(dir);
      assert.deepEqual(
        result.errors.map((e) => e.message),
        [],
      );
      assert.deepEqual(
        result.manifests.map((m) => [m.sourcePath, m.metadata.name]),
        [
          ["real/cm.yaml", "linked"],
          ["real/cm.yaml", "linked"],
        ],
      );
    });
  });

  void it("collects errors from every file in path order, and reads the rest", async () => {
    await withTree(
      {
        "z.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Z}\n",
        "a.json": "{",
        "m/ok.yaml": configMap("ok"),
        "m/no-name.yml": "apiVersion: v1\nkind: ConfigMap\n",
      },
      async (dir) => {
        const result = failed(await readSource(dir, { scope: root, kinds: fakeDiscovery() }));
        assert.deepEqual(
          result.errors.map((e) => [e.sourcePaths[0], e.code]),
          [
            ["a.json", "KNV1006"],
            ["m/no-name.yml", "KNV1031"],
            ["z.yaml", "KNV1036"],
          ],
        );
        assert.deepEqual(
          result.partialObjects.map((o) => o.sourcePath),
          ["m/ok.yaml"],
        );
      },
    );
  });

  void it("lets the cluster-dependent step be re-run with fresh discovery, without reading files again", async () => {
    await withTree({ "w.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n" }, async (dir) => {
      const set = await readManifests(dir);
      assert.deepEqual(set.errors, []);
      const before = await declareObjects(set, { scope: root, kinds: { resolveKind: () => undefined } });
      assert.equal(before.errors[0]?.code, "KNV1021");
      const widget: KindInfo = { group: "example.com", version: "v1", resource: "widgets", namespaced: true };
      const after = complete(
        await declareObjects(set, { scope: root, kinds: { resolveKind: () => Promise.resolve(widget) } }),
      );
      assert.equal(after.objects[0]?.id.namespace, "default");
      // The first step's manifests are not changed by defaulting.
      assert.equal(set.manifests[0]?.metadata.namespace, undefined);
    });
  });

  void it("rejects when discovery itself fails, since that is not a problem with the source", async () => {
    await withTree({ "a.yaml": configMap("a") }, async (dir) => {
      const kinds = { resolveKind: () => Promise.reject(new Error("discovery unavailable")) };
      await assert.rejects(readSource(dir, { scope: root, kinds }), /discovery unavailable/);
    });
  });
});
