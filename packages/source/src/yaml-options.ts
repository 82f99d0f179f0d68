/**
 * How YAML is read, shared by the full parser and the fast path so both resolve scalars identically:
 * as kubectl and Config Sync do (sigs.k8s.io/yaml on go-yaml v2), i.e. YAML 1.1 booleans such as
 * `on`/`yes`, merge keys, and duplicate keys accepted with the last value winning (Config Sync's
 * decoder is not strict: `name: a` then `name: b` declares b).
 */
import type { DocumentOptions, ParseOptions, ScalarTag, SchemaOptions, Tags } from "yaml";

const IntTag = "tag:yaml.org,2002:int";
const FloatTag = "tag:yaml.org,2002:float";

/**
 * YAML 1.1 also resolves `12:30` to 750 and `2024-01-02` to a Date; go-yaml v2 keeps both as strings
 * when decoding into untyped maps, so those tags are dropped to read ConfigMap data the same way.
 * Numbers are go-yaml v2's (`goYamlNumber`) in place of the library's YAML 1.1 patterns, which read
 * `e2`, `.` or `-.` as NaN (refused as KNV1006) and `0o17` as a string.
 */
export function kubernetesTags(tags: Tags): Tags {
  const kept = tags.filter((tag) =>
    typeof tag === "string"
      ? !["timestamp", "intTime", "floatTime"].includes(tag)
      : tag.tag !== "tag:yaml.org,2002:timestamp" && !("format" in tag && tag.format === "TIME"),
  );
  const scalar = (tag: (typeof kept)[number]): tag is ScalarTag => typeof tag !== "string" && !tag.collection;
  const int = kept.find((tag) => scalar(tag) && tag.tag === IntTag && tag.format === undefined) as ScalarTag;
  const float = kept.find((tag) => scalar(tag) && tag.tag === FloatTag && tag.format === undefined) as ScalarTag;
  const numeric = (tag: (typeof kept)[number]): boolean => scalar(tag) && (tag.tag === IntTag || tag.tag === FloatTag);
  return [goNumberTag(int, "int"), goNumberTag(float, "float"), ...kept.filter((tag) => !numeric(tag))];
}

/**
 * The library's tag (its output form kept) resolving plain scalars as go-yaml v2 does. Its `test` is
 * the only hook the library and fast-yaml.ts consult, hence a RegExp whose `test` runs `goYamlNumber`.
 * The float tag accepts ints too, as go-yaml does for an explicit `!!float 5`.
 */
function goNumberTag(base: ScalarTag, kind: "int" | "float"): ScalarTag {
  const accepts = (text: string): boolean => {
    const number = goYamlNumber(text);
    return number !== undefined && (kind === "float" || number.kind === "int");
  };
  return {
    ...base,
    default: true,
    test: new PredicatePattern(accepts),
    resolve: (text: string) => goYamlNumber(text)?.value ?? text,
  };
}

class PredicatePattern extends RegExp {
  readonly #accepts: (text: string) => boolean;

  constructor(accepts: (text: string) => boolean) {
    super("(?!)");
    this.#accepts = accepts;
  }

  override test(text: string): boolean {
    return this.#accepts(text);
  }
}

const Int64Min = -(2n ** 63n);
const Int64Max = 2n ** 63n - 1n;
const Uint64Max = 2n ** 64n - 1n;
// A Map, not an object literal: a key such as `toString` must not find Object.prototype's.
const SpecialFloats: ReadonlyMap<string, number> = new Map([
  ...[".nan", ".NaN", ".NAN"].map((text) => [text, NaN] as const),
  ...[".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"].map((text) => [text, Infinity] as const),
  ...["-.inf", "-.Inf", "-.INF"].map((text) => [text, -Infinity] as const),
]);
/** go-yaml's yamlStyleFloat. */
const YamlStyleFloat = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** What Go's strconv.ParseInt(s, 0, 64) reads (underscores already removed). */
const GoIntSyntax = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/;

/**
 * The number go-yaml v2 (gopkg.in/yaml.v2 resolve.go) reads a plain scalar as, or undefined for a
 * string: a leading `.` is Go's ParseFloat alone; a leading digit or sign drops every `_`, then
 * ParseInt/ParseUint with Go's base prefixes (`0x`, `0o`, `0b`, a leading 0 for octal), then a
 * decimal float; a float out of range is a string; any other leading character is a string.
 */
export function goYamlNumber(text: string): { kind: "int" | "float"; value: number } | undefined {
  const special = SpecialFloats.get(text);
  if (special !== undefined) return { kind: "float", value: special };
  const first = text.charAt(0);
  if (first === ".") return goFloat(text);
  if (!/^[-+0-9]$/.test(first)) return undefined;
  const plain = text.replaceAll("_", "");
  const int = goInt(plain);
  if (int !== undefined) return { kind: "int", value: Number(int) };
  return YamlStyleFloat.test(plain) ? goFloat(plain) : undefined;
}

function goInt(plain: string): bigint | undefined {
  const match = GoIntSyntax.exec(plain);
  if (!match) return undefined;
  const [, sign = "", digits = ""] = match;
  // BigInt reads 0x/0o/0b itself; Go's legacy leading-zero octal needs the 0o spelled out.
  const literal = /^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits;
  const magnitude = BigInt(literal.replace(/^0([XOB])/, (_, p: string) => `0${p.toLowerCase()}`));
  const value = sign === "-" ? -magnitude : magnitude;
  // ParseInt's int64, else ParseUint's uint64 (which takes no sign at all).
  if (value >= Int64Min && value <= Int64Max) return value;
  return sign === "" && value <= Uint64Max ? value : undefined;
}

function goFloat(text: string): { kind: "float"; value: number } | undefined {
  if (!YamlStyleFloat.test(text)) return undefined;
  const value = Number(text);
  // ParseFloat's ErrRange: go-yaml keeps the text as a string.
  return Number.isFinite(value) ? { kind: "float", value } : undefined;
}

export const yamlOptions: ParseOptions & DocumentOptions & SchemaOptions = {
  version: "1.1",
  customTags: kubernetesTags,
  // A repeated key replaces the earlier value whole, as go-yaml v2 decoding into a map does.
  uniqueKeys: false,
  // Messages must not quote the source: a broken Secret manifest would leak into status and logs.
  prettyErrors: false,
};
