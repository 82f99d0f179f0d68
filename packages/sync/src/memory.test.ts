import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { collectAfterPass } from "./memory.ts";

void describe("collectAfterPass", () => {
  void it("does nothing without --expose-gc", () => {
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, "undefined", "run this test without --expose-gc");
    assert.equal(collectAfterPass(), false);
  });

  void it("starts a major collection with V8's own gc() under the reconciler's flag, for a large heap only", () => {
    // A child process, as the reconciler runs: V8 must accept the options this module passes.
    const script = [
      `import { collectAfterPass } from ${JSON.stringify(new URL("./memory.ts", import.meta.url).href)};`,
      "const calls = [];",
      "const real = globalThis.gc;",
      "globalThis.gc = (options) => { calls.push(options); return real(options); };",
      "const small = collectAfterPass();",
      "const started = collectAfterPass(0);",
      "process.stdout.write(JSON.stringify({ small, started, calls }));",
    ].join("\n");
    const out = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    // A small heap (this child's) is left to V8; past the threshold, one asynchronous major collection.
    assert.deepEqual(JSON.parse(out), { small: false, started: true, calls: [{ type: "major", execution: "async" }] });
  });
});
