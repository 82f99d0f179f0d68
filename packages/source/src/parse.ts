/**
 * Manifest text to plain JSON documents. YAML is read the way kubectl and Config Sync read it (see
 * yaml-options.ts), so an object means the same thing here as it would to `kubectl apply`.
 */
import { LineCounter, parseAllDocuments } from "yaml";
import type { ToJSOptions } from "yaml";
import { ManifestParseError } from "./errors.ts";
import { fastParseYaml } from "./fast-yaml.ts";
import { asJsonValue, describeJsonType, isJsonObject } from "./json.ts";
import type { JsonObject, JsonValue } from "./json.ts";
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
}

const toJsOptions: ToJSOptions = { maxAliasCount: 100 };

export function isManifestFileName(name: string): boolean {
  return name.endsWith(".yaml") || name.endsWith(".yml") || name.endsWith(".json");
}

export function parseManifestText(text: string, sourcePath: string): ParsedFile {
  // Editors on Windows add a BOM; JSON.parse rejects it, kubectl does not.
  const content = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return sourcePath.endsWith(".json") ? parseJson(content, sourcePath) : parseYaml(content, sourcePath);
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
  const many = docs.length > 1;
  const documents: { value: unknown; location: string }[] = [];
  const errors: ManifestParseError[] = [];
  docs.forEach((doc, i) => {
    const location = many ? `document ${i + 1}` : "";
    const first = doc.errors[0];
    if (first) {
      const { line, col } = lineCounter.linePos(first.pos[0]);
      const message = `${sourcePath}: invalid YAML at line ${line}, column ${col}: ${first.message}`;
      errors.push(new ManifestParseError(message, { sourcePaths: [sourcePath] }));
      return;
    }
    try {
      const value: unknown = doc.toJS(toJsOptions);
      if (value !== null && value !== undefined) documents.push({ value, location });
    } catch (error) {
      // Alias bombs and unresolvable aliases end up here.
      const reason = error instanceof Error ? error.message : String(error);
      errors.push(
        new ManifestParseError(at(sourcePath, location, `invalid YAML: ${reason}`), { sourcePaths: [sourcePath] }),
      );
    }
  });
  const checked = toDocuments(documents, sourcePath);
  return { documents: checked.documents, errors: [...errors, ...checked.errors] };
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
