/**
 * A kustomization or plugin configuration read as kustomize reads it: go-yaml's YAML 1.1, every scalar as
 * text, and Go's encoding/json matching keys case-insensitively. Constructs the two YAML readers take apart
 * are refused (`goYamlDifference`), so what the path walk checks is what kustomize reads.
 */
import { readFile } from "node:fs/promises";
import { isAlias, isScalar, parseAllDocuments, visit, type DocumentOptions, type SchemaOptions } from "yaml";
import { RenderingError } from "./render-error.ts";

export type Json = Readonly<Record<string, unknown>>;

/**
 * YAML 1.1 as kustomize's go-yaml reads it, every scalar but null as its text: go-yaml has no
 * sexagesimal numbers (`1:20`) and hands a date (`2001-12-14`) over as text, so a name the JS library
 * would take for a number or a date is still checked as the path kustomize may read. Merge keys are
 * refused (`goYamlDifference`), not merged.
 */
const yamlOptions: DocumentOptions & SchemaOptions = { version: "1.1", schema: "failsafe", customTags: ["null"] };

type YamlDocument = ReturnType<typeof parseAllDocuments>[number];

/** Every document of a YAML file as an object; a file kustomize could read but this cannot is refused. */
export async function parseYaml(file: string, where: string): Promise<Json[]> {
  const parsed = parseYamlText(await readUtf8(file, where), where);
  if ("problem" in parsed) throw new RenderingError(`${where} is not valid YAML: ${parsed.problem}`);
  return parsed.objects;
}

/**
 * The objects of YAML text (a file's, or a plugin entry kustomize may read inline), or why it does not
 * parse; constructs go-yaml reads otherwise are refused.
 */
export function parseYamlText(
  text: string,
  where: string,
): { readonly problem: string } | { readonly objects: Json[] } {
  const docs = parseAllDocuments(text, yamlOptions);
  const error = docs.flatMap((doc) => doc.errors)[0];
  if (error !== undefined) return { problem: error.message };
  for (const doc of docs) refuseGoYamlDifference(doc, text, where);
  return { objects: docs.map((doc) => toJs(doc, where)).filter(isRecord) };
}

/** go-yaml decodes a file by its byte order mark: a UTF-16 one, which this walk would read as one string, is refused. */
async function readUtf8(file: string, where: string): Promise<string> {
  const bytes = await readFile(file);
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    throw new RenderingError(
      `${where} is not UTF-8 (UTF-16): driftless reads kustomizations and plugin configurations only as UTF-8`,
    );
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    // go-yaml refuses invalid UTF-8 too.
    throw new RenderingError(`${where} is not UTF-8: ${(error as Error).message}`, error);
  }
}

/**
 * Refuses an explicit tag (go-yaml decodes `!!binary` to the text kustomize reads, where the JS library
 * gives bytes this walk cannot check), a merge key `<<` (go-yaml lets it override the keys beside it,
 * the JS library keeps them), and anchors and aliases (so none is trusted to resolve alike).
 */
function refuseGoYamlDifference(doc: YamlDocument, text: string, where: string): void {
  const found = goYamlDifference(doc, text);
  if (found === undefined) return;
  const line = text.slice(0, found.offset).split("\n").length;
  // Stricter than Config Sync, which hands such YAML to kustomize.
  throw new RenderingError(
    `${where}: line ${line} uses the YAML ${found.what}, which kustomize's YAML parser reads otherwise than driftless's check of the paths it names; explicit tags, merge keys, anchors and aliases are refused (stricter than Config Sync): write the values out plainly`,
  );
}

/** The first tag, merge key, anchor or alias of `doc`, and where it is in `text`. */
function goYamlDifference(doc: YamlDocument, text: string): { what: string; offset: number } | undefined {
  let found: { what: string; offset: number } | undefined;
  visit(doc, {
    Pair(_, pair) {
      // Quoted too: go-yaml v2 takes a quoted `<<` for a merge key as well.
      if (isScalar(pair.key) && pair.key.value === "<<")
        found = { what: "merge key <<", offset: pair.key.range?.[0] ?? 0 };
      return found === undefined ? undefined : visit.BREAK;
    },
    Node(_, node) {
      const start = node.range?.[0] ?? 0;
      // A node's range leaves out its tag and anchor, written before it.
      const before = (mark: string): number => Math.max(0, text.lastIndexOf(mark, start));
      // The failsafe schema resolves no tag itself: a node's tag is one written in the source.
      if (isAlias(node)) found = { what: `alias *${node.source}`, offset: start };
      else if (node.anchor !== undefined) found = { what: `anchor &${node.anchor}`, offset: before(`&${node.anchor}`) };
      else if (node.tag !== undefined)
        found = { what: `tag ${doc.directives?.tagString(node.tag) ?? node.tag}`, offset: before("!") };
      return found === undefined ? undefined : visit.BREAK;
    },
  });
  return found;
}

/** A document's value; too many aliases (a YAML bomb) fail the render rather than the walk's memory. */
function toJs(doc: YamlDocument, where: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: 1000 });
  } catch (error) {
    throw new RenderingError(`${where} cannot be read as YAML: ${(error as Error).message}`, error);
  }
}

export function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Go's encoding/json folds case (and K/ſ to k/s) when matching keys: every key that folds to `key`. */
export function valuesOf(obj: Json, key: string): unknown[] {
  const want = fold(key);
  return Object.keys(obj)
    .filter((k) => fold(k) === want)
    .map((k) => obj[k]);
}

function fold(key: string): string {
  return key
    .replace(/\u212a/g, "k")
    .replace(/\u017f/g, "s")
    .toLowerCase();
}

export function value(obj: Json, key: string): unknown {
  return valuesOf(obj, key)[0];
}

/** The strings of a field holding a string or a list of strings; other shapes kustomize refuses itself. */
export function strings(obj: Json, key: string): string[] {
  return valuesOf(obj, key).flatMap((v) =>
    typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [],
  );
}

/** The objects of a field holding an object or a list of objects. */
export function records(obj: Json, key: string): Json[] {
  return valuesOf(obj, key).flatMap((v) => (isRecord(v) ? [v] : Array.isArray(v) ? v.filter(isRecord) : []));
}
