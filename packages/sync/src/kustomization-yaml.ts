/**
 * A kustomization or plugin configuration read as kustomize reads it: go-yaml's YAML 1.1, every scalar as
 * text, and Go's encoding/json matching keys case-insensitively. Constructs the two YAML readers take apart
 * are refused (`goYamlDifference`, `goYamlLineBreak`), so what the path walk checks is what kustomize reads.
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

/**
 * Who reads the file in kustomize. A kustomization goes through sigs.k8s.io/yaml into Go structs, where a
 * number in a string field fails the build. A plugin configuration is read by kyaml first, whose go-yaml
 * v3 turns a plain `012` into 10 and a plain `2001-12-14` into a time; kustomize then hands the plugin's
 * string field their Go text ("10", "2001-12-14T00:00:00Z"), not the text written (`TypedScalar`).
 */
export type YamlReader = "kustomization" | "plugin";

/** Every document of a YAML file as an object; a file kustomize could read but this cannot is refused. */
export async function parseYaml(file: string, where: string, reader: YamlReader = "kustomization"): Promise<Json[]> {
  const parsed = parseYamlText(await readUtf8(file, where), where, reader);
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
  reader: YamlReader = "kustomization",
): { readonly problem: string } | { readonly objects: Json[] } {
  refuseGoYamlLineBreak(text, where);
  const docs = parseAllDocuments(text, yamlOptions);
  const error = docs.flatMap((doc) => doc.errors)[0];
  if (error !== undefined) return { problem: error.message };
  for (const doc of docs) refuseGoYamlDifference(doc, text, where);
  if (reader === "plugin") for (const doc of docs) markTypedScalars(doc);
  return { objects: docs.map((doc) => toJs(doc, where)).filter(isRecord) };
}

/** go-yaml ends a line at these too (its is_break); the JS library only at \n and \r\n. */
const goYamlLineBreak = /\r(?!\n)|[\u0085\u2028\u2029]/;

const lineBreakNames: Readonly<Record<string, string>> = {
  "\r": "a carriage return (U+000D) without a line feed after it",
  "\u0085": "a next-line character (U+0085)",
  "\u2028": "a line separator (U+2028)",
  "\u2029": "a paragraph separator (U+2029)",
};

/**
 * Refuses a line break only go-yaml sees: `files: [ok.txt]` then `\r- /etc/x` is one harmless entry to the
 * JS library and two to kustomize, and `# note\rhelmCharts:` a comment to one and a key to the other.
 */
function refuseGoYamlLineBreak(text: string, where: string): void {
  const found = goYamlLineBreak.exec(text);
  if (found === null) return;
  const line = text.slice(0, found.index).split("\n").length;
  // Stricter than Config Sync, which hands such YAML to kustomize.
  throw new RenderingError(
    `${where}: line ${line} holds ${lineBreakNames[found[0]] ?? "a line break"}, which kustomize's YAML parser (go-yaml) reads as a line break and driftless's check of the paths it names does not; such line breaks are refused (stricter than Config Sync): end lines with \\n or \\r\\n only`,
  );
}

/** What kyaml's go-yaml v3 makes of a plain scalar other than text (null aside). */
export type TypedKind = "bool" | "number" | "timestamp";

/**
 * A plain scalar of a plugin configuration that go-yaml v3 resolves to a bool, a number or a timestamp:
 * kustomize reads Go's text of the value, which may name another file than `text` (`012` reads `10`).
 */
export class TypedScalar {
  readonly text: string;
  readonly kind: TypedKind;
  constructor(text: string, kind: TypedKind) {
    this.text = text;
    this.kind = kind;
  }
}

/** Thrown when the walk reads a value kustomize would read as other text than the walk checks; named where it is caught. */
export class MisreadValue extends RenderingError {}

/** Thrown when the walk reads a `TypedScalar` as a string. */
export class TypedScalarRead extends MisreadValue {
  constructor(key: string, scalar: TypedScalar) {
    super(
      `${key} ${scalar.text} is a plain YAML ${scalar.kind} to kustomize, which reads Go's text of the value (012 becomes 10, 2001-12-14 becomes 2001-12-14T00:00:00Z), not the name written; quote it ("${scalar.text}") to name a file`,
    );
  }
}

/** Replaces each plain value scalar go-yaml v3 would not read as text by a `TypedScalar` (keys stay text). */
function markTypedScalars(doc: YamlDocument): void {
  visit(doc, {
    Scalar(key, node) {
      if (key === "key" || node.type !== "PLAIN" || typeof node.value !== "string") return;
      const kind = goYamlPlainKind(node.value);
      if (kind !== undefined) node.value = new TypedScalar(node.value, kind);
    },
  });
}

// go-yaml v3's resolve (go.yaml.in/yaml/v3 resolve.go, kyaml v0.21), as a superset: ranges are not
// checked, so a plain scalar Go would still read as text (0x1_0000_0000_0000_0000) may be refused too.
const goYamlBools = new Set(["true", "True", "TRUE", "false", "False", "FALSE"]);
const goYamlSpecialFloats = new Set(
  [".nan", ".NaN", ".NAN"].concat(...[".inf", ".Inf", ".INF"].map((inf) => [inf, `+${inf}`, `-${inf}`])),
);
/** Go's strconv.ParseInt/ParseUint with base 0, after go-yaml drops every `_`. */
const goInt = /^[-+]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|[0-9]+)$/;
/** go-yaml's yamlStyleFloat; a scalar starting with `.` goes to ParseFloat, which reads the same. */
const goYamlFloat = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** go-yaml's own 0b/0o branches parse the digits with a sign of their own: `0b-101` is -5. */
const goYamlSignedBase = /^-?0(b[-+]?[01]+|o[-+]?[0-7]+)$/;
/** Go's time.Parse of go-yaml's four timestamp layouts (date; T, t or space; time; fraction; zone). */
const goYamlTimestamp =
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(([Tt]| +)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}([.,][0-9]*)? *(Z|[-+][0-9]{1,2}(:?[0-9]{2})?)?)?$/;

/** The kind go-yaml v3 resolves a plain scalar to, undefined for text (and null, which stays null). */
export function goYamlPlainKind(text: string): TypedKind | undefined {
  if (goYamlBools.has(text)) return "bool";
  if (goYamlSpecialFloats.has(text)) return "number";
  // go-yaml tries numbers and timestamps only for a scalar starting with a sign, a digit or a dot.
  if (!/^[-+0-9.]/.test(text)) return undefined;
  if (goYamlTimestamp.test(text)) return "timestamp";
  const plain = text.replace(/_/g, "");
  return goInt.test(plain) || goYamlFloat.test(plain) || goYamlSignedBase.test(plain) ? "number" : undefined;
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

/**
 * Thrown for a string holding a next-line character (U+0085, a double-quoted `\N` or `\x85`). kustomize
 * hands a kustomization's generators, patches and helmCharts to its builtin plugins as YAML it writes
 * and reads back (sigs.k8s.io/yaml), and go-yaml writes NEL raw in a double-quoted scalar and folds it on
 * reading: `A\NB` names the file `A B` (NEL NEL a line feed, with the spaces around them dropped).
 */
export class NextLineRead extends MisreadValue {
  constructor(key: string, value: string) {
    const shown = JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value).replace(/\u0085/g, "\\u0085");
    super(
      `${key} ${shown} holds a next-line character (U+0085), which kustomize turns into a space or a line feed before it reads the file, so it would read another file than the one named; such values are refused (stricter than Config Sync)`,
    );
  }
}

/**
 * The strings of a field holding a string or a list of strings; other shapes kustomize refuses itself.
 * A `TypedScalar` among them throws `TypedScalarRead`, a string holding U+0085 `NextLineRead`:
 * kustomize would read other text than this returns.
 */
export function strings(obj: Json, key: string): string[] {
  const values = pluginEntries(obj, key);
  const folded = values.find((v) => v.includes("\u0085"));
  if (folded !== undefined) throw new NextLineRead(key, folded);
  return values;
}

/**
 * The entries of `generators`, `transformers` or `validators`: strings kustomize parses as YAML itself
 * (no hand-over folds them), where `parseYamlText` refuses a NEL as a line break go-yaml alone sees.
 */
export function pluginEntries(obj: Json, key: string): string[] {
  const text = (v: unknown): string[] => {
    if (v instanceof TypedScalar) throw new TypedScalarRead(key, v);
    return typeof v === "string" ? [v] : [];
  };
  return valuesOf(obj, key).flatMap((v) => (Array.isArray(v) ? v.flatMap(text) : text(v)));
}

/**
 * A bool field as kustomize reads it: from a kustomization, go-yaml v2's YAML 1.1 `true` (yes, on...);
 * from a plugin configuration, go-yaml v3's.
 */
export function isTrue(obj: Json, key: string): boolean {
  return valuesOf(obj, key).some((v) =>
    v instanceof TypedScalar
      ? v.kind === "bool" && /^(true|True|TRUE)$/.test(v.text)
      : typeof v === "string" && /^(y|Y|yes|Yes|YES|true|True|TRUE|on|On|ON)$/.test(v),
  );
}

/** The objects of a field holding an object or a list of objects. */
export function records(obj: Json, key: string): Json[] {
  return valuesOf(obj, key).flatMap((v) => (isRecord(v) ? [v] : Array.isArray(v) ? v.filter(isRecord) : []));
}
