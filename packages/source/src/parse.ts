/**
 * Manifest text to plain JSON documents. YAML is read the way kubectl and Config Sync read it (see
 * yaml-options.ts), so an object means the same thing here as it would to `kubectl apply`.
 */
import { LineCounter, parseAllDocuments } from "yaml";
import type { Document, ToJSOptions } from "yaml";
import { ManifestLimitError, ManifestParseError } from "./errors.ts";
import { fastParseYaml } from "./fast-yaml.ts";
import { asJsonValue, describeJsonType, isJsonObject, nestsDeeperThan } from "./json.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import { formatChars, SourceLimits } from "./limits.ts";
import { measureYamlDocument } from "./yaml-measure.ts";
import { yamlOptions } from "./yaml-options.ts";

/** One top-level document of a file, before List expansion. */
export interface ParsedDocument {
  readonly value: JsonObject;
  /** Where in the file, for messages ("document 2"); "" when the file holds one document. */
  readonly location: string;
}

export interface ParsedFile {
  readonly documents: readonly ParsedDocument[];
  readonly errors: readonly ManifestParseError[];
  /** Characters YAML aliases add once expanded (see SourceLimits); absent when there are none. */
  readonly aliasChars?: number;
}

const toJsOptions: ToJSOptions = { maxAliasCount: 100 };

export function isManifestFileName(name: string): boolean {
  return name.endsWith(".yaml") || name.endsWith(".yml") || name.endsWith(".json");
}

export function isJsonFileName(name: string): boolean {
  return name.endsWith(".json");
}

/**
 * `fileName` names the file whose extension decides JSON or YAML: the symlink's target when `sourcePath` is a
 * link, as Config Sync reads the resolved path's extension.
 */
export function parseManifestText(text: string, sourcePath: string, fileName: string = sourcePath): ParsedFile {
  // Editors on Windows add a BOM; JSON.parse rejects it, kubectl does not.
  const content = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return isJsonFileName(fileName) ? parseJson(content, sourcePath) : parseYaml(content, sourcePath);
}

function parseJson(text: string, sourcePath: string): ParsedFile {
  // Kubernetes accepts an empty JSON file among many; so does Config Sync.
  if (text.trim() === "") return { documents: [], errors: [] };
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (error) {
    // V8's message quotes the surrounding text; keep only where it happened.
    const where = error instanceof Error ? /at position \d+(?: \(line \d+ column \d+\))?/.exec(error.message) : null;
    const message = `${sourcePath}: invalid JSON${where ? ` ${where[0]}` : ""}`;
    return { documents: [], errors: [new ManifestParseError(message, { sourcePaths: [sourcePath] })] };
  }
  // JSON.parse itself does not recurse, but every later walk of the value does.
  if (nestsDeeperThan(value, SourceLimits.maxDepth)) return { documents: [], errors: [tooDeep(sourcePath, "", "")] };
  return toDocuments([{ value, location: "" }], sourcePath);
}

function parseYaml(text: string, sourcePath: string): ParsedFile {
  const fast = fastParseYaml(text);
  if (fast) {
    const many = fast.length > 1;
    // `---` alone, only comments, or `null`: kubectl and Config Sync skip empty documents.
    const values = fast.flatMap((value, i) =>
      value === null ? [] : [{ value, location: many ? `document ${i + 1}` : "" }],
    );
    return toDocuments(values, sourcePath);
  }
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { ...yamlOptions, lineCounter });
  const position = (offset: number): string => {
    const { line, col } = lineCounter.linePos(offset);
    return `line ${line}, column ${col}`;
  };
  const many = docs.length > 1;
  const composed: { doc: (typeof docs)[number]; location: string }[] = [];
  const errors: ManifestParseError[] = [];
  let aliasChars = 0;
  docs.forEach((doc, i) => {
    const location = many ? `document ${i + 1}` : "";
    const first = doc.errors[0] ?? unreadDirective(doc);
    const exhausted = doc.errors.find((e) => e.code === "RESOURCE_EXHAUSTION");
    if (exhausted) {
      // The library catches its own stack overflow on deep nesting and reports it so.
      errors.push(tooDeep(sourcePath, location, position(exhausted.pos[0])));
    } else if (first) {
      const message = `${sourcePath}: invalid YAML at ${position(first.pos[0])}: ${first.message}`;
      errors.push(new ManifestParseError(message, { sourcePaths: [sourcePath] }));
    } else {
      const measure = measureYamlDocument(doc, SourceLimits.maxDepth);
      if (measure.ok) {
        aliasChars += measure.aliasChars;
        composed.push({ doc, location });
      } else if (measure.problem === "too-deep") {
        errors.push(tooDeep(sourcePath, location, position(measure.offset)));
      } else {
        const message = at(
          sourcePath,
          location,
          `invalid YAML at ${position(measure.offset)}: an alias refers to a node that contains it`,
        );
        errors.push(new ManifestParseError(message, { sourcePaths: [sourcePath] }));
      }
    }
  });
  if (aliasChars > SourceLimits.maxAliasCharsPerFile) {
    const message =
      `${sourcePath}: YAML aliases expand this file by ${formatChars(aliasChars)}, over the limit of ` +
      `${formatChars(SourceLimits.maxAliasCharsPerFile)} per file (every object that uses an alias holds it in full)`;
    return { documents: [], errors: [...errors, new ManifestLimitError(message, { sourcePaths: [sourcePath] })] };
  }
  const documents: { value: unknown; location: string }[] = [];
  for (const { doc, location } of composed) {
    try {
      const value: unknown = doc.toJS(toJsOptions);
      flattenStrings(value);
      if (value !== null && value !== undefined) documents.push({ value, location });
    } catch (error) {
      // Too many aliases (the library's own count) and unresolvable aliases end up here.
      const reason = error instanceof Error ? error.message : String(error);
      errors.push(
        new ManifestParseError(at(sourcePath, location, `invalid YAML: ${reason}`), { sourcePaths: [sourcePath] }),
      );
    }
  }
  const checked = toDocuments(documents, sourcePath);
  return {
    documents: checked.documents,
    errors: [...errors, ...checked.errors],
    ...(aliasChars > 0 ? { aliasChars } : {}),
  };
}

/**
 * A directive go-yaml v2 refuses, as an error in the library's shape: `%YAML` other than 1.1 ("found
 * incompatible YAML document") and unknown directives. The library reads a `%YAML 1.2` document by
 * YAML 1.2's rules (`on` a string) where Config Sync refuses the file.
 */
function unreadDirective(doc: Document.Parsed): { pos: [number, number]; message: string } | undefined {
  const unknown = doc.warnings.find((w) => w.code === "BAD_DIRECTIVE");
  if (unknown) return { pos: unknown.pos, message: `${unknown.message.split("\n")[0]} (go-yaml v2 refuses it)` };
  const { explicit, version } = doc.directives?.yaml ?? {};
  if (explicit && version !== "1.1") {
    return { pos: [0, 0], message: `%YAML ${version}: only YAML 1.1 is read, as go-yaml v2 (Config Sync) reads it` };
  }
  return undefined;
}

function tooDeep(sourcePath: string, location: string, position: string): ManifestLimitError {
  const where = position ? ` (at ${position})` : "";
  const message = at(sourcePath, location, `nested deeper than the limit of ${SourceLimits.maxDepth} levels${where}`);
  return new ManifestLimitError(message, { sourcePaths: [sourcePath] });
}

function toDocuments(values: readonly { value: unknown; location: string }[], sourcePath: string): ParsedFile {
  const documents: ParsedDocument[] = [];
  const errors: ManifestParseError[] = [];
  for (const { value, location } of values) {
    const json = asJsonValue(value);
    if ("badPath" in json) {
      const message = at(sourcePath, location, `${json.badPath} is ${json.what}, which has no JSON representation`);
      errors.push(new ManifestParseError(message, { sourcePaths: [sourcePath] }));
    } else if (!isJsonObject(json.value)) {
      const message = at(
        sourcePath,
        location,
        `expected a Kubernetes object (a mapping with apiVersion, kind and metadata), found ${describeJsonType(json.value)}`,
      );
      errors.push(new ManifestParseError(message, { sourcePaths: [sourcePath] }));
    } else {
      documents.push({ value: json.value, location });
    }
  }
  return { documents, errors };
}

/** `path (document 2): message`, the prefix every message about a place in a file gets. */
export function at(sourcePath: string, location: string, message: string): string {
  return `${sourcePath}${location ? ` (${location})` : ""}: ${message}`;
}

/**
 * The general parser builds a quoted scalar a character at a time, and V8 keeps the result as a rope of
 * ~32 bytes per character until something reads it flat: 5,000 ConfigMaps with one 900-character quoted value
 * each held 74 MiB of rope. Reading a character of each string flattens it in place and frees the rope; the
 * sum is kept where the optimizing compiler cannot prove it unused, or it would drop the reads.
 */
let flattenedChars = 0;

function flattenStrings(value: unknown): void {
  const pending: unknown[] = [value];
  for (let node = pending.pop(); pending.length > 0 || node !== undefined; node = pending.pop()) {
    if (typeof node !== "object" || node === null) continue;
    for (const item of Array.isArray(node) ? (node as unknown[]) : Object.values(node)) {
      if (typeof item === "string") flattenedChars = (flattenedChars + item.charCodeAt(0)) | 0;
      else if (typeof item === "object" && item !== null) pending.push(item);
    }
  }
}
