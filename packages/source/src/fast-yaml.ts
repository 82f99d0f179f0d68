/**
 * A fast path for the plain YAML nearly every manifest is written in: block mappings and sequences,
 * single-line plain and quoted scalars, `|` literal blocks, comments. The general parser costs
 * 150-400 µs for a ten-line ConfigMap on a small machine; this costs a few, which is the difference
 * between reading 10,000 files in seconds or in a fraction of one.
 *
 * It must never disagree with the general parser, so it gives up (returns undefined) on anything it
 * does not fully handle, and the file is parsed again the slow way: anchors, aliases, tags, flow
 * collections, folded or indented-indicator blocks, multi-line flow scalars, escapes, tabs, CR, merge
 * and non-string keys, duplicates, nesting past `SourceLimits.maxDepth`, and anything that would be an error. Scalars are resolved with the
 * general parser's own schema, so `on`, `0x1F` or `~` mean the same on both paths. fast-yaml.test.ts
 * checks agreement on generated documents.
 */
import { isScalar, Schema } from "yaml";
import type { ScalarTag } from "yaml";
import { SourceLimits } from "./limits.ts";
import { kubernetesTags } from "./yaml-options.ts";

const plainTags: readonly ScalarTag[] = new Schema({ schema: "yaml-1.1", customTags: kubernetesTags }).tags.filter(
  (tag): tag is ScalarTag => !tag.collection && tag.default === true && tag.test !== undefined,
);

/** Thrown inside the fast path to give up; never escapes this module. */
const unsupported = Symbol("unsupported");

function giveUp(): never {
  throw unsupported;
}

/**
 * The documents of `text` as the general parser's `toJS()` would return them (null for empty
 * documents), or undefined when the text uses anything this fast path does not handle.
 */
export function fastParseYaml(text: string): unknown[] | undefined {
  if (text.includes("\t") || text.includes("\r")) return undefined;
  try {
    return parseStream(text);
  } catch (error) {
    if (error === unsupported) return undefined;
    throw error;
  }
}

function parseStream(text: string): unknown[] {
  const lines = text.split("\n");
  const endsWithNewline = lines[lines.length - 1] === "";
  if (endsWithNewline) lines.pop();

  // Document boundaries: `---` at column 0, alone or followed by a comment.
  const segments: { start: number; end: number }[] = [];
  let start = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line.startsWith("%") || line.startsWith("...")) giveUp();
    if (!line.startsWith("---")) continue;
    if (line.length > 3 && line[3] !== " ") continue; // `----` or `---x` is content
    if (!/^---( *| +#.*)$/.test(line)) giveUp();
    segments.push({ start, end: i });
    start = i + 1;
  }
  segments.push({ start, end: lines.length });

  const documents: unknown[] = [];
  segments.forEach(({ start: from, end: to }, index) => {
    const body = lines.slice(from, to);
    const hasContent = body.some((line) => !isBlankOrComment(line));
    // Like the general parser: comments before the first `---` do not make a document of their own.
    if (index === 0 && !hasContent) return;
    const isLast = index === segments.length - 1;
    documents.push(hasContent ? new DocumentParser(body, isLast && !endsWithNewline).parse() : null);
  });
  return documents;
}

function isBlankOrComment(line: string): boolean {
  const trimmed = line.trimStart();
  return trimmed === "" || trimmed.startsWith("#");
}

function indentOf(line: string): number {
  let n = 0;
  while (line.charCodeAt(n) === 32) n++;
  return n;
}

function isDash(content: string): boolean {
  return content === "-" || content.startsWith("- ");
}

class DocumentParser {
  private readonly lines: string[];
  private readonly unterminated: boolean;
  private pos = 0;
  /** Collections open around the current line: deeper nesting is left to the general parser. */
  private depth = 0;

  constructor(lines: string[], unterminated: boolean) {
    this.lines = lines;
    this.unterminated = unterminated;
  }

  parse(): unknown {
    const first = this.nextContent(0);
    const line = this.lines[first] ?? "";
    const indent = indentOf(line);
    // Only mappings: anything else is not a Kubernetes object, and the general parser words that error.
    if (isDash(line.slice(indent))) giveUp();
    this.pos = first;
    const value = this.parseMapping(indent);
    if (this.nextContent(this.pos) < this.lines.length) giveUp();
    return value;
  }

  private nextContent(from: number): number {
    let i = from;
    while (i < this.lines.length && isBlankOrComment(this.lines[i] ?? "")) i++;
    return i;
  }

  /** Past the limit the general parser reports the file; recursing here could overflow the stack. */
  private enter(): void {
    if (++this.depth > SourceLimits.maxDepth) giveUp();
  }

  private parseMapping(indent: number): Record<string, unknown> {
    this.enter();
    const result: Record<string, unknown> = {};
    for (;;) {
      const i = this.nextContent(this.pos);
      if (i >= this.lines.length) break;
      const line = this.lines[i] ?? "";
      const lineIndent = indentOf(line);
      if (lineIndent < indent) break;
      if (lineIndent > indent) giveUp();
      const entry = splitKey(line.slice(indent));
      if (!entry || entry.key === "__proto__" || entry.key === "<<" || Object.hasOwn(result, entry.key)) giveUp();
      this.pos = i + 1;
      const rest = entry.rest;
      result[entry.key] =
        rest === "" || rest.startsWith("#") ? this.parseNested(indent, true) : this.parseInline(rest, indent, i);
    }
    this.depth--;
    return result;
  }

  private parseSequence(indent: number): unknown[] {
    this.enter();
    const result: unknown[] = [];
    for (;;) {
      const i = this.nextContent(this.pos);
      if (i >= this.lines.length) break;
      const line = this.lines[i] ?? "";
      const lineIndent = indentOf(line);
      if (lineIndent < indent) break;
      if (lineIndent > indent) giveUp();
      const content = line.slice(indent);
      // A key at the sequence's indentation ends a sequence that is the value of a mapping key.
      if (!isDash(content)) break;
      this.pos = i + 1;
      const afterDash = content.slice(1);
      const rest = afterDash.trimStart();
      if (rest === "" || rest.startsWith("#")) {
        result.push(this.parseNested(indent, false));
      } else if (isDash(rest)) {
        giveUp();
      } else if (splitKey(rest)) {
        // `- key: value`: a mapping whose keys line up with this first key.
        const mappingIndent = indent + 1 + (afterDash.length - rest.length);
        this.lines[i] = " ".repeat(mappingIndent) + rest;
        this.pos = i;
        result.push(this.parseMapping(mappingIndent));
      } else {
        result.push(this.parseInline(rest, indent, i));
      }
    }
    this.depth--;
    return result;
  }

  /** The block node under `key:` or `-`, or null when nothing more indented follows. */
  private parseNested(parentIndent: number, allowSequenceAtSameIndent: boolean): unknown {
    const j = this.nextContent(this.pos);
    if (j >= this.lines.length) return null;
    const line = this.lines[j] ?? "";
    const indent = indentOf(line);
    const dash = isDash(line.slice(indent));
    if (indent > parentIndent || (indent === parentIndent && dash && allowSequenceAtSameIndent)) {
      this.pos = j;
      return dash ? this.parseSequence(indent) : this.parseMapping(indent);
    }
    return null;
  }

  /** A value written after `key: ` or `- `; `text` is non-empty and not a comment. */
  private parseInline(text: string, parentIndent: number, lineIndex: number): unknown {
    const first = text[0];
    let value: unknown;
    if (first === '"' || first === "'") {
      const quoted = first === '"' ? doubleQuoted(text) : singleQuoted(text);
      if (!quoted || !isBlankOrComment(quoted.rest) || (quoted.rest !== "" && !quoted.rest.startsWith(" "))) giveUp();
      value = detached(quoted.value);
    } else if (first === "|") {
      return this.literalBlock(text, parentIndent, lineIndex);
    } else if (/^(\{\}|\[\])( *| +#.*)$/.test(text)) {
      // An empty collection is one level deeper too.
      if (this.depth >= SourceLimits.maxDepth) giveUp();
      value = text[0] === "{" ? {} : [];
    } else {
      if (first === undefined || "[]{}>&*!%@`?:,#".includes(first) || isDash(text)) giveUp();
      const comment = text.indexOf(" #");
      const plain = (comment === -1 ? text : text.slice(0, comment)).trimEnd();
      if (plain.includes(": ") || plain.endsWith(":")) giveUp();
      value = resolvePlain(plain);
    }
    // A more-indented line after a scalar would continue it over several lines.
    const next = this.nextContent(this.pos);
    if (next < this.lines.length && indentOf(this.lines[next] ?? "") > parentIndent) giveUp();
    return value;
  }

  /** `|`, `|-` or `|+`, with the content's indentation taken from its first line. */
  private literalBlock(header: string, parentIndent: number, lineIndex: number): string {
    const match = /^\|([+-]?)( *| +#.*)$/.exec(header);
    if (!match) giveUp();
    const chomp = match[1];
    const body: string[] = [];
    let j = lineIndex + 1;
    for (; j < this.lines.length; j++) {
      const line = this.lines[j] ?? "";
      if (line.trim() !== "" && indentOf(line) <= parentIndent) break;
      body.push(line);
    }
    // The general parser's handling of a final line without a newline differs subtly; not worth it.
    if (j === this.lines.length && this.unterminated) giveUp();
    const firstContent = body.findIndex((line) => line.trim() !== "");
    if (firstContent === -1) giveUp();
    const blockIndent = indentOf(body[firstContent] ?? "");
    const texts = body.map((line) => {
      const blank = line.trim() === "";
      // Whitespace-only lines longer than the indentation carry content; indentation less than the
      // block's is an error. Leave both to the general parser.
      if (blank ? line.length > blockIndent : indentOf(line) < blockIndent) giveUp();
      return blank ? "" : line.slice(blockIndent);
    });
    let last = texts.length - 1;
    while (last >= 0 && (body[last] ?? "").trim() === "") last--;
    const content = texts.slice(0, last + 1).join("\n");
    const trailingBlank = texts.length - 1 - last;
    this.pos = j;
    if (chomp === "-") return content;
    if (chomp === "+") return content + "\n".repeat(1 + trailingBlank);
    return `${content}\n`;
  }
}

/** `key: rest` or `key:` with a plain or quoted key; undefined when the line is not a mapping entry. */
function splitKey(content: string): { key: string; rest: string } | undefined {
  const first = content[0];
  if (first === '"' || first === "'") {
    const quoted = first === '"' ? doubleQuoted(content) : singleQuoted(content);
    const after = quoted ? /^ *:( |$)/.exec(quoted.rest) : null;
    if (!quoted || !after) return undefined;
    return { key: quoted.value, rest: quoted.rest.slice(after[0].length).trimStart() };
  }
  if (first === undefined || "[]{}#&*!|>%@`,?:-".includes(first)) return undefined;
  const colon = /:( |$)/.exec(content);
  if (!colon) return undefined;
  const keyText = content.slice(0, colon.index);
  if (keyText.includes(" #")) return undefined;
  const key = resolvePlain(keyText.trimEnd());
  // `y:`, `on:` or `8080:` keys are booleans or numbers in YAML 1.1, stringified in their own way.
  if (typeof key !== "string" || key === "") giveUp();
  return { key, rest: content.slice(colon.index + 1).trimStart() };
}

function doubleQuoted(text: string): { value: string; rest: string } | undefined {
  const close = text.indexOf('"', 1);
  if (close === -1) return undefined;
  const value = text.slice(1, close);
  if (value.includes("\\")) giveUp();
  return { value, rest: text.slice(close + 1) };
}

function singleQuoted(text: string): { value: string; rest: string } | undefined {
  let i = 1;
  for (;;) {
    const close = text.indexOf("'", i);
    if (close === -1) return undefined;
    if (text[close + 1] === "'") {
      i = close + 2;
      continue;
    }
    return { value: text.slice(1, close).replaceAll("''", "'"), rest: text.slice(close + 1) };
  }
}

/** A plain scalar's value, resolved by the same tags, in the same order, as the general parser. */
function resolvePlain(text: string): unknown {
  for (const tag of plainTags) {
    if (!tag.test?.test(text)) continue;
    let failed = false;
    const resolved = tag.resolve(text, () => (failed = true), {});
    if (failed) giveUp();
    return isScalar(resolved) ? resolved.value : resolved;
  }
  return detached(text);
}

/**
 * A string that does not keep the file's text alive. V8 makes a substring of 13 characters or more
 * a view into its parent; values parsed here live as long as their commit is synced, and through
 * such views they kept every file's whole text (2 MiB at 10,000 small files). Appending and cutting
 * one character makes V8 copy the value into a string of its own.
 */
function detached(value: string): string {
  return value.length < 13 ? value : `${value} `.slice(0, -1);
}
