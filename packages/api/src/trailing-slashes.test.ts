import { test } from "node:test";
import assert from "node:assert/strict";
import { withoutTrailingSlashes } from "./trailing-slashes.ts";

test("trailing slashes go, in one pass over a long run of slashes not at the end", () => {
  assert.equal(withoutTrailingSlashes("https://host/repo///"), "https://host/repo");
  assert.equal(withoutTrailingSlashes("///"), "");
  assert.equal(withoutTrailingSlashes("a"), "a");
  const hostile = `https://host/${"/".repeat(1_000_000)}x`;
  assert.equal(withoutTrailingSlashes(hostile), hostile);
});
