import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { collectAfterPass } from "./memory.ts";

void describe("collectAfterPass", () => {
  void it("does nothing without --expose-gc", () => {
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, "undefined", "run this test without --expose-gc");
    assert.equal(collectAfterPass(), "none");
  });

  void it("asks V8 for a memory-reducing collection on a small heap and a major one on a large heap", () => {
    // A child process, as the reconciler runs: V8 must accept the options this module passes.
    const script = [
      `import { collectAfterPass } from ${JSON.stringify(new URL("./memory.ts", import.meta.url).href)};`,
      "const calls = [];",
      "const real = globalThis.gc;",
      "globalThis.gc = (options) => { calls.push(options); return real(options); };",
      "const small = collectAfterPass();",
      "const large = collectAfterPass(0);",
      "process.stdout.write(JSON.stringify({ small, large, calls }));",
    ].join("\n");
    const out = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    // A small heap (this child's) is shrunk (young generation included); past the threshold, a major collection.
    assert.deepEqual(JSON.parse(out), {
      small: "reduce",
      large: "major",
      calls: [
        { type: "major", execution: "async", flavor: "last-resort" },
        { type: "major", execution: "async" },
      ],
    });
  });
});
