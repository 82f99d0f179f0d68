import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { jsonTokensExceed } from "./json-tokens.ts";

/** The tokens of a parsed value: containers, strings (keys included), and one comma per further item. */
function tokensOf(value: unknown): number {
  if (typeof value === "string") return 1;
  if (Array.isArray(value))
    return 1 + Math.max(0, value.length - 1) + value.reduce((sum: number, v) => sum + tokensOf(v), 0);
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    return 1 + Math.max(0, entries.length - 1) + entries.reduce((sum, [, v]) => sum + 1 + tokensOf(v), 0);
  }
  return 0;
}

test("the scan counts what a parse would build, escapes and brackets inside strings included", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.boolean(), (value, spaced) => {
      const text = Buffer.from(JSON.stringify(value, null, spaced ? 2 : undefined));
      const tokens = tokensOf(value);
      assert.equal(jsonTokensExceed(text, tokens), false);
      if (tokens > 0) assert.equal(jsonTokensExceed(text, tokens - 1), true);
    }),
    { numRuns: 500 },
  );
});

test("a string full of commas, brackets and escaped quotes is one token", () => {
  const text = Buffer.from(JSON.stringify({ csv: 'a,b,[c],{d},\\"e\\",'.repeat(1000) }));
  assert.equal(jsonTokensExceed(text, 3), false);
  assert.equal(jsonTokensExceed(text, 2), true);
});
