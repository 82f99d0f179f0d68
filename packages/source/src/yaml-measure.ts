/**
 * Measures a composed YAML document before it becomes values: how deep it nests and how much its
 * aliases add once expanded. `toJS()` shares one value between an anchor and its aliases, but hashing,
 * the last-applied record and the request body each write every alias out in full, so a small file
 * can cost a reconciler gigabytes. Counting on the syntax tree costs one walk and expands nothing.
 */
import { isAlias, isMap, isPair, isScalar, isSeq } from "yaml";
import type { Document } from "yaml";

export type YamlMeasure =
  | { readonly ok: true; readonly aliasChars: number }
  | { readonly ok: false; readonly problem: Problem; readonly offset: number };

interface Size {
  /** Characters of keys and strings, 1 per other value, with every alias expanded. */
  readonly chars: number;
  /** Nesting of collections below and including this node, with aliases expanded. */
  readonly height: number;
}

type Problem = "too-deep" | "alias-cycle";

/** Thrown inside the walk to stop at the first problem; never escapes this module. */
class Stop {
  readonly problem: Problem;
  readonly offset: number;
  constructor(problem: Problem, offset: number) {
    this.problem = problem;
    this.offset = offset;
  }
}

const scalarSize = (value: unknown): Size => ({ chars: typeof value === "string" ? value.length : 1, height: 0 });

/**
 * The characters the document's aliases add, or the first problem: nesting deeper than `maxDepth`
 * (aliases included) or an alias inside the node it names (whose value would contain itself).
 */
export function measureYamlDocument(doc: Document.Parsed, maxDepth: number): YamlMeasure {
  // Anchors as the walk meets them, in document order: an alias names the last one before it.
  const anchors = new Map<string, Size | "open">();
  let aliasChars = 0;

  const offsetOf = (node: { range?: readonly number[] | null | undefined }): number => node.range?.[0] ?? 0;

  const walk = (node: unknown, level: number): Size => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === "open") throw new Stop("alias-cycle", offsetOf(node));
      // An unknown anchor is left to toJS(), which reports it.
      if (target === undefined) return scalarSize(null);
      aliasChars += target.chars;
      return target;
    }
    if (isScalar(node)) {
      const size = scalarSize(node.value);
      if (node.anchor) anchors.set(node.anchor, size);
      return size;
    }
    if (isPair(node)) {
      const key = walk(node.key, level);
      const value = walk(node.value, level);
      return { chars: key.chars + value.chars, height: Math.max(key.height, value.height) };
    }
    if (isMap(node) || isSeq(node)) {
      // Checked on the way down too, so the walk itself never recurses past the limit.
      if (level > maxDepth) throw new Stop("too-deep", offsetOf(node));
      if (node.anchor) anchors.set(node.anchor, "open");
      let chars = 1;
      let below = 0;
      for (const item of node.items) {
        const size = walk(item, level + 1);
        chars += size.chars;
        below = Math.max(below, size.height);
      }
      const size = { chars, height: below + 1 };
      if (node.anchor) anchors.set(node.anchor, size);
      return size;
    }
    return scalarSize(null);
  };

  try {
    const root = walk(doc.contents, 1);
    if (root.height > maxDepth) return { ok: false, problem: "too-deep", offset: offsetOf(doc.contents ?? {}) };
    return { ok: true, aliasChars };
  } catch (error) {
    if (error instanceof Stop) return { ok: false, problem: error.problem, offset: error.offset };
    throw error;
  }
}
