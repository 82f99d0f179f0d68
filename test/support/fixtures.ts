import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { findRepoRoot } from "@driftless/local-cluster";

export const fixturesDir = join(findRepoRoot(), "test", "fixtures");

/** A plain JSON object (parsed YAML/JSON) with unknown shape. */
export type JsonObject = { [key: string]: unknown };

/** Reads a YAML fixture (read-only) and substitutes NAMESPACE, returning a fresh copy each call. */
export function yamlFixture(path: string, vars: Readonly<Record<string, string>> = {}): JsonObject {
  let text = readFileSync(join(fixturesDir, path), "utf8");
  for (const [key, value] of Object.entries(vars)) text = text.replaceAll(key, value);
  return parse(text) as JsonObject;
}
