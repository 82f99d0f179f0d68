import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { canonicalQuantity, parseQuantity, quantitiesEqual } from "./quantity.ts";

describe("quantities", () => {
  it("stores what the API server would store (Go's canonical form)", () => {
    const cases: [string | number, string][] = [
      [0.5, "500m"],
      ["0.5", "500m"],
      ["1024Mi", "1Gi"],
      ["1000Mi", "1000Mi"],
      ["1536Mi", "1536Mi"],
      ["1.5Gi", "1536Mi"],
      ["0.5Ki", "512"],
      ["1000m", "1"],
      ["1500", "1500"],
      ["2000", "2k"],
      [1, "1"],
      ["100M", "100M"],
      ["1e3", "1e3"],
      ["1E", "1E"],
      ["0", "0"],
      ["0.1m", "100u"],
      ["-1", "-1"],
    ];
    for (const [input, stored] of cases) assert.equal(canonicalQuantity(input), stored, `${input}`);
  });

  it('compares by value: 0.5 = 500m, 1024Mi = 1Gi, 1Gi = 1073741824, 1 = "1"', () => {
    assert.ok(quantitiesEqual(0.5, "500m"));
    assert.ok(quantitiesEqual("1024Mi", "1Gi"));
    assert.ok(quantitiesEqual("1Gi", "1073741824"));
    assert.ok(quantitiesEqual(1, "1"));
    assert.ok(quantitiesEqual("1k", "1e3"));
  });

  it("tells different values apart: 1G ≠ 1Gi, 500m ≠ 0.05", () => {
    assert.ok(!quantitiesEqual("1G", "1Gi"));
    assert.ok(!quantitiesEqual("500m", "0.05"));
    assert.ok(!quantitiesEqual("1", "1m"));
  });

  it("rejects what is not a quantity", () => {
    for (const input of ["", "abc", "1.2.3", "1Qi", "Gi", " 1", true, null])
      assert.equal(parseQuantity(input), undefined, String(input));
    assert.ok(!quantitiesEqual("abc", "abc"), "equal strings that are not quantities are not equal quantities");
  });
});
