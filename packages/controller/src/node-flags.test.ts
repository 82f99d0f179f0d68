import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reconcilerNodeFlags } from "./node-flags.ts";

void describe("reconcilerNodeFlags", () => {
  void it("gives V8 three quarters of the default 512Mi limit, 4 MiB semi-spaces, and gc() for after a pass", () => {
    assert.deepEqual(reconcilerNodeFlags(), ["--max-semi-space-size=4", "--max-old-space-size=384", "--expose-gc"]);
  });

  void it("follows the sync's memory limit in any quantity notation", () => {
    assert.ok(reconcilerNodeFlags("2Gi").includes("--max-old-space-size=1536"));
    assert.ok(reconcilerNodeFlags("1G").includes(`--max-old-space-size=${Math.floor((1e9 / 2 ** 20) * 0.75)}`));
  });

  void it("never sizes the heap below 128 MiB, and ignores a limit it cannot read", () => {
    assert.ok(reconcilerNodeFlags("64Mi").includes("--max-old-space-size=128"));
    assert.ok(reconcilerNodeFlags("lots").includes("--max-old-space-size=384"));
  });
});
