import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseManifestText } from "./parse.ts";

/** Each plain scalar as go-yaml v2 (Config Sync, kubectl) reads it, checked with gopkg.in/yaml.v2 v2.4.0. */
const goYamlReads: readonly [string, unknown][] = [
  ["e2", "e2"],
  ["E5", "E5"],
  ["e+1", "e+1"],
  [".", "."],
  ["-.", "-."],
  ["+.", "+."],
  ["._", "._"],
  [".e1", ".e1"],
  [".1_", ".1_"],
  ["1e400", "1e400"],
  ["0x_", "0x_"],
  ["0o17", 15],
  ["0O17", 15],
  ["+_1", 1],
  ["-_046", -38],
  ["+0_x9", 9],
  ["3_1E7_", 310000000],
  ["0_", 0],
  ["0x10000000000000000", "0x10000000000000000"],
  // What the YAML 1.1 library already read the same way.
  [".5", 0.5],
  ["+.5", 0.5],
  ["1.", 1],
  ["1e-400", 0],
  ["0x1F", 31],
  ["0777", 511],
  ["08", 8],
  ["1_000", 1000],
  ["-0b101", -5],
  ["1E+5", 100000],
  ["y", true],
  ["Off", false],
  ["~", null],
  ["-.nan", "-.nan"],
  ["toString", "toString"],
  ["constructor", "constructor"],
];

void describe("plain scalars read as go-yaml v2 reads them", () => {
  for (const [scalar, expected] of goYamlReads) {
    void it(`reads ${scalar} as ${JSON.stringify(expected)} on both parse paths`, () => {
      // The flow sequence sends the second text to the general parser; the first takes the fast path.
      for (const text of [`apiVersion: v1\nk: ${scalar}\n`, `apiVersion: v1\nk: ${scalar}\nx: [a]\n`]) {
        const { documents, errors } = parseManifestText(text, "cm.yaml");
        assert.deepEqual(errors, [], text);
        assert.deepEqual(documents[0]?.value["k"], expected, text);
      }
    });
  }

  void it("keeps a ConfigMap whose data holds e2 or . (no KNV1006 non-finite number)", () => {
    const text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\ndata:\n  series: e2\n  dir: .\n";
    const { documents, errors } = parseManifestText(text, "cm.yaml");
    assert.deepEqual(errors, []);
    assert.deepEqual(documents[0]?.value["data"], { series: "e2", dir: "." });
  });

  void it("still refuses .nan and .inf, which have no JSON form", () => {
    for (const scalar of [".nan", "-.Inf"]) {
      const { errors } = parseManifestText(`k: ${scalar}\n`, "cm.yaml");
      assert.match(errors[0]?.message ?? "", /non-finite number/);
    }
  });
});
