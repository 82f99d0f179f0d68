import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { hydrate } from "./hydrate.ts";
import { vet } from "./vet.ts";

// `kubectl api-resources` output, as nomos reads it from the top of a source.
const apiResources = [
  "NAME   SHORTNAMES   APIVERSION        NAMESPACED   KIND",
  "foos                example.com/v1    true         Foo",
  "bars                example.com/v1    false        Bar",
  "",
].join("\n");

async function source(t: { after: (fn: () => Promise<void>) => void }, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-api-resources-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

async function vetLines(dir: string, format: "hierarchy" | "unstructured"): Promise<{ exit: number; text: string }> {
  const lines: string[] = [];
  const exit = await vet(dir, { format, scope: { kind: "RootSync" } }, (line) => void lines.push(line));
  return { exit, text: lines.join("\n") };
}

const codes = (text: string): string[] => [...new Set(text.match(/KNV\d{4}/g) ?? [])].sort();

const bar = "apiVersion: example.com/v1\nkind: Bar\nmetadata: {name: bar1, namespace: x}\n";
const foo = "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: foo1}\n";
const repo = "apiVersion: configmanagement.gke.io/v1\nkind: Repo\nmetadata: {name: repo}\nspec: {version: 1.0.0}\n";

// Each verdict is what nomos v1.22 `vet --no-api-server-check` gives for the same source.
void describe("vet and hydrate read api-resources.txt for the scope of kinds they cannot look up, as nomos does", () => {
  void it("a kind listed cluster-scoped that declares a namespace is KNV1052; without the file nothing is known of it", async (t) => {
    const dir = await source(t, { "api-resources.txt": apiResources, "all.yaml": bar });
    const listed = await vetLines(dir, "unstructured");
    assert.equal(listed.exit, 1, listed.text);
    assert.deepEqual(codes(listed.text), ["KNV1052"]);
    await rm(join(dir, "api-resources.txt"));
    assert.equal((await vetLines(dir, "unstructured")).exit, 0);
  });

  void it("a kind listed namespaced, in a hierarchy's cluster/, is KNV1039", async (t) => {
    const files = {
      "api-resources.txt": apiResources,
      "system/repo.yaml": repo,
      "cluster/foo.yaml": foo,
    };
    const dir = await source(t, files);
    const listed = await vetLines(dir, "hierarchy");
    assert.deepEqual(codes(listed.text), ["KNV1039"]);
  });

  void it("the file's scope wins over the built-in one, and a CRD in the source over the file", async (t) => {
    const configMaps = "NAME SHORTNAMES APIVERSION NAMESPACED KIND\nconfigmaps cm v1 false ConfigMap\n";
    const dir = await source(t, {
      "api-resources.txt": configMaps,
      "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n",
    });
    assert.deepEqual(codes((await vetLines(dir, "unstructured")).text), ["KNV1052"]);

    const crd = await source(t, {
      "api-resources.txt": apiResources,
      "all.yaml": bar,
      "crd.yaml":
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: bars.example.com}\n" +
        "spec: {group: example.com, scope: Namespaced, names: {plural: bars, kind: Bar}, versions: [{name: v1, served: true, storage: true}]}\n",
    });
    const checked = await vetLines(crd, "unstructured");
    assert.equal(checked.exit, 0, checked.text);
  });

  void it("a file that is not kubectl api-resources output is KNV1064, for vet and hydrate, and nothing is written", async (t) => {
    const noHeader = await source(t, { "api-resources.txt": "NAME KIND\nfoos Foo\n", "all.yaml": foo });
    const missing = await vetLines(noHeader, "unstructured");
    assert.equal(missing.exit, 1);
    assert.match(
      missing.text,
      /^KNV1064: unable to find APIVERSION column\. .*\(api-resources\.txt\)\n\nFor more information, see https:\/\/g\.co\/cloud\/acm-errors#knv1064$/,
    );

    const badScope = await source(t, {
      "api-resources.txt":
        "NAME SHORTNAMES APIVERSION     NAMESPACED KIND\nfoos            example.com/v1 maybe      Foo\n",
      "all.yaml": foo,
    });
    const lines: string[] = [];
    const output = join(badScope, "out");
    const code = await hydrate({ dir: badScope, format: "unstructured", output }, (line) => void lines.push(line));
    assert.equal(code, 1);
    assert.match(
      lines.join("\n"),
      /^KNV1064: invalid NAMESPACED column value "maybe" in line "example\.com\/v1 maybe      Foo"/,
    );
    await assert.rejects(rm(output), { code: "ENOENT" });
  });
});
