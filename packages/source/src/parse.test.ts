import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseManifestText } from "./parse.ts";

void describe("parseManifestText", () => {
  void it("reads every document of a multi-document YAML file and skips empty ones", () => {
    const text =
      "---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\n---\n---\n~\n---\napiVersion: v1\nkind: Secret\n";
    const { documents, errors } = parseManifestText(text, "a.yaml");
    assert.deepEqual(errors, []);
    assert.deepEqual(
      documents.map((d) => d.value["kind"]),
      ["ConfigMap", "Secret"],
    );
  });

  void it("returns nothing for an empty or comment-only file", () => {
    assert.deepEqual(parseManifestText("", "a.yaml"), { documents: [], errors: [] });
    assert.deepEqual(parseManifestText("# nothing here\n", "a.yml"), { documents: [], errors: [] });
    assert.deepEqual(parseManifestText("  \n", "a.json"), { documents: [], errors: [] });
  });

  void it("reads scalars as kubectl does: YAML 1.1 booleans, but times and dates stay strings", () => {
    const text = "a: on\nb: yes\nc: 12:30\nd: 2024-01-02\ne: '0777'\nf: 0x10\n";
    const [doc] = parseManifestText(text, "a.yaml").documents;
    assert.deepEqual(doc?.value, { a: true, b: true, c: "12:30", d: "2024-01-02", e: "0777", f: 16 });
  });

  void it("refuses directives go-yaml v2 refuses (%YAML other than 1.1, unknown ones), as Config Sync does", () => {
    for (const text of ["%YAML 1.2\n---\na: on\n", "%YAML 1.3\n---\na: 1\n", "%FOO bar\n---\na: 1\n"]) {
      const { documents, errors } = parseManifestText(text, "a.yaml");
      assert.deepEqual(documents, [], text);
      assert.equal(errors[0]?.code, "KNV1006", text);
      assert.match(errors[0]?.message ?? "", /^a\.yaml: invalid YAML at line 1, column \d+: /);
    }
    const kept = parseManifestText("%YAML 1.1\n%TAG !e! tag:example.com,2000:\n---\na: on\n", "a.yaml");
    assert.deepEqual(kept, { documents: [{ value: { a: true }, location: "" }], errors: [] });
  });

  void it("supports anchors and merge keys", () => {
    const text = "base: &b {x: 1}\nmerged:\n  <<: *b\n  z: 2\n";
    const [doc] = parseManifestText(text, "a.yaml").documents;
    assert.deepEqual(doc?.value["merged"], { x: 1, z: 2 });
  });

  void it('turns YAML 1.1 boolean and number keys into strings the way sigs.k8s.io/yaml does (`y:` becomes "true")', () => {
    const [doc] = parseManifestText("y: 1\n8080: http\n", "a.yaml").documents;
    assert.deepEqual(doc?.value, { true: 1, "8080": "http" });
  });

  void it("reports invalid YAML with its line and column, without quoting the file", () => {
    const text = "apiVersion: v1\nkind: Secret\ndata:\n  token: c2VjcmV0\n   bad: [\n";
    const { documents, errors } = parseManifestText(text, "secrets/s.yaml");
    assert.equal(documents.length, 0);
    assert.equal(errors.length, 1);
    const [error] = errors;
    assert.equal(error?.code, "KNV1006");
    assert.equal(error?.errorClass, "terminal");
    assert.deepEqual(error?.sourcePaths, ["secrets/s.yaml"]);
    assert.match(error?.message ?? "", /^secrets\/s\.yaml: invalid YAML at line \d+, column \d+: /);
    assert.doesNotMatch(error?.message ?? "", /c2VjcmV0/);
  });

  void it("accepts duplicate keys, the last value winning whole, as Config Sync's decoder does", () => {
    const text = "kind: A\nmetadata:\n  name: cm\n  labels: {x: y}\n  name: cm2\nmetadata:\n  name: cm3\n  name: cm4\n";
    const { documents, errors } = parseManifestText(text, "a.yaml");
    assert.deepEqual(errors, []);
    assert.deepEqual(documents[0]?.value, { kind: "A", metadata: { name: "cm4" } });
    // In flow style and in JSON too.
    assert.deepEqual(parseManifestText("{a: 1, a: 2}\n", "a.yaml").documents[0]?.value, { a: 2 });
    assert.deepEqual(parseManifestText('{"a": 1, "a": 2}', "a.json").documents[0]?.value, { a: 2 });
  });

  void it("keeps the good documents of a file when another document is broken", () => {
    const { documents, errors } = parseManifestText("kind: A\n---\nkind: [\n---\nkind: C\n", "a.yaml");
    assert.equal(errors.length, 1);
    assert.match(errors[0]?.message ?? "", /invalid YAML at line \d+/);
    assert.deepEqual(
      documents.map((d) => [d.value["kind"], d.location]),
      [
        ["A", "document 1"],
        ["C", "document 3"],
      ],
    );
  });

  void it("rejects documents that are not mappings", () => {
    const { errors } = parseManifestText("- a\n- b\n---\njust text\n", "a.yaml");
    assert.equal(errors.length, 2);
    assert.match(errors[0]?.message ?? "", /a\.yaml \(document 1\): expected a Kubernetes object .*found a list/);
    assert.match(errors[1]?.message ?? "", /found a string/);
  });

  void it("rejects values JSON cannot carry", () => {
    const { errors } = parseManifestText("spec:\n  ratio: .inf\n", "a.yaml");
    assert.equal(errors.length, 1);
    assert.match(errors[0]?.message ?? "", /\$\.spec\.ratio is a non-finite number/);
    const binary = parseManifestText("data: !!binary aGVsbG8=\n", "b.yaml");
    assert.equal(binary.errors.length, 1);
    assert.match(binary.errors[0]?.message ?? "", /\$\.data is a (Buffer|Uint8Array)/);
  });

  void it("reads a JSON object and tolerates a byte-order mark", () => {
    const { documents, errors } = parseManifestText('\ufeff{"apiVersion":"v1","kind":"ConfigMap"}', "a.json");
    assert.deepEqual(errors, []);
    assert.deepEqual(documents[0]?.value, { apiVersion: "v1", kind: "ConfigMap" });
  });

  void it("reports invalid JSON with its position, without quoting the file", () => {
    const { errors } = parseManifestText('{"kind": "Secret", "data": {"token": hunter2}}', "a.json");
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.code, "KNV1006");
    assert.match(errors[0]?.message ?? "", /^a\.json: invalid JSON/);
    assert.doesNotMatch(errors[0]?.message ?? "", /hunter2/);
  });

  void it("rejects a JSON array at the top level", () => {
    const { errors } = parseManifestText("[]", "a.json");
    assert.match(errors[0]?.message ?? "", /found a list/);
  });
});
