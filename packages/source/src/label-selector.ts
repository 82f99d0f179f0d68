/**
 * Kubernetes label selectors (`matchLabels`, `matchExpressions` with In, NotIn, Exists, DoesNotExist)
 * as ClusterSelectors and NamespaceSelectors declare them in `spec.selector`. Reading one has two steps,
 * as Config Sync's: `decodeLabelSelector` checks the types (Config Sync's typed decode, KNV1006 when a
 * value is of the wrong type), `parseLabelSelector` the meaning (KNV1014: empty, unknown operator, a key
 * or value Kubernetes would refuse in a label...).
 */
import { describeJsonType, isJsonObject } from "./json.ts";
import type { JsonValue } from "./json.ts";

export type Labels = Readonly<Record<string, string>>;
export type LabelMatcher = (labels: Labels) => boolean;

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values: readonly string[];
}

/** `spec.selector` with the types Kubernetes' LabelSelector gives it. */
export interface LabelSelectorSpec {
  readonly matchLabels: Labels;
  readonly matchExpressions: readonly LabelSelectorRequirement[];
}

type Decoded<T> = { readonly value: T } | { readonly unparsable: string };

const wrongType = (path: string, expected: string, value: JsonValue): { unparsable: string } => ({
  unparsable: `${path} must be ${expected}, found ${describeJsonType(value)}`,
});

/**
 * `value` as a string where Go's typed decode takes one: null is the empty string, as
 * Kubernetes' unstructured converter reads it; anything else but a string cannot be decoded.
 */
export function decodeString(path: string, value: JsonValue | undefined): Decoded<string> {
  if (value === undefined || value === null) return { value: "" };
  return typeof value === "string" ? { value } : wrongType(path, "a string", value);
}

/** The selector at `path` (`spec.selector`) with its types checked; absent or null is the empty selector. */
export function decodeLabelSelector(path: string, raw: JsonValue | undefined): Decoded<LabelSelectorSpec> {
  if (raw === undefined || raw === null) return { value: { matchLabels: {}, matchExpressions: [] } };
  if (!isJsonObject(raw)) return wrongType(path, "a mapping", raw);
  const matchLabels = decodeMatchLabels(`${path}.matchLabels`, raw["matchLabels"]);
  if ("unparsable" in matchLabels) return matchLabels;
  const matchExpressions = decodeExpressions(`${path}.matchExpressions`, raw["matchExpressions"]);
  if ("unparsable" in matchExpressions) return matchExpressions;
  return { value: { matchLabels: matchLabels.value, matchExpressions: matchExpressions.value } };
}

function decodeMatchLabels(path: string, raw: JsonValue | undefined): Decoded<Labels> {
  if (raw === undefined || raw === null) return { value: {} };
  if (!isJsonObject(raw)) return wrongType(path, "a mapping of strings", raw);
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    const decoded = decodeString(`${path}.${key}`, value);
    if ("unparsable" in decoded) return decoded;
    labels[key] = decoded.value;
  }
  return { value: labels };
}

function decodeExpressions(path: string, raw: JsonValue | undefined): Decoded<LabelSelectorRequirement[]> {
  if (raw === undefined || raw === null) return { value: [] };
  if (!Array.isArray(raw)) return wrongType(path, "a list", raw);
  const requirements: LabelSelectorRequirement[] = [];
  for (const [index, item] of (raw as readonly JsonValue[]).entries()) {
    const decoded = decodeExpression(`${path}[${index}]`, item ?? {});
    if ("unparsable" in decoded) return decoded;
    requirements.push(decoded.value);
  }
  return { value: requirements };
}

function decodeExpression(path: string, raw: JsonValue): Decoded<LabelSelectorRequirement> {
  if (!isJsonObject(raw)) return wrongType(path, "a mapping", raw);
  const key = decodeString(`${path}.key`, raw["key"]);
  if ("unparsable" in key) return key;
  const operator = decodeString(`${path}.operator`, raw["operator"]);
  if ("unparsable" in operator) return operator;
  const values = decodeValues(`${path}.values`, raw["values"]);
  if ("unparsable" in values) return values;
  return { value: { key: key.value, operator: operator.value, values: values.value } };
}

function decodeValues(path: string, raw: JsonValue | undefined): Decoded<string[]> {
  if (raw === undefined || raw === null) return { value: [] };
  if (!Array.isArray(raw)) return wrongType(path, "a list of strings", raw);
  const values: string[] = [];
  for (const [index, item] of (raw as readonly JsonValue[]).entries()) {
    const decoded = decodeString(`${path}[${index}]`, item);
    if ("unparsable" in decoded) return decoded;
    values.push(decoded.value);
  }
  return { value: values };
}

/** The selector, or why it is not one. An empty selector is refused, as Config Sync refuses it. */
export function parseLabelSelector(spec: LabelSelectorSpec): { matcher: LabelMatcher } | { problem: string } {
  const tests: LabelMatcher[] = [];
  for (const [key, value] of Object.entries(spec.matchLabels)) {
    // Config Sync reads the selector with metav1.LabelSelectorAsSelector, which refuses a key or a value no
    // label could have (KNV1014), where such a selector would just match nothing.
    const problem = labelKeyProblem(key) ?? labelValueProblem(key, value);
    if (problem !== undefined) return { problem: `spec.selector.matchLabels: ${problem}` };
    tests.push((labels) => labels[key] === value);
  }
  for (const expression of spec.matchExpressions) {
    const parsed = parseExpression(expression);
    if ("problem" in parsed) return { problem: `spec.selector.matchExpressions: ${parsed.problem}` };
    tests.push(parsed.matcher);
  }
  if (tests.length === 0) return { problem: "spec.selector is empty or missing; it must select something" };
  return { matcher: (labels) => tests.every((test) => test(labels)) };
}

function parseExpression({
  key,
  operator,
  values,
}: LabelSelectorRequirement): { matcher: LabelMatcher } | { problem: string } {
  if (key === "") return { problem: "each expression needs a key" };
  const problem = labelKeyProblem(key) ?? firstDefined(values.map((value) => labelValueProblem(key, value)));
  if (problem !== undefined && isKnownOperator(operator)) return { problem };
  switch (operator) {
    case "In":
    case "NotIn": {
      if (values.length === 0) return { problem: `${key}: ${operator} needs at least one value` };
      const set = new Set(values);
      const has = (labels: Labels): boolean => labels[key] !== undefined && set.has(labels[key]);
      return { matcher: operator === "In" ? has : (labels) => !has(labels) };
    }
    case "Exists":
    case "DoesNotExist": {
      if (values.length > 0) return { problem: `${key}: ${operator} takes no values` };
      return {
        matcher: operator === "Exists" ? (l) => l[key] !== undefined : (l) => l[key] === undefined,
      };
    }
    default:
      return { problem: `${key}: unknown operator ${JSON.stringify(operator)}` };
  }
}

const knownOperators: ReadonlySet<string> = new Set(["In", "NotIn", "Exists", "DoesNotExist"]);

function isKnownOperator(operator: string): boolean {
  return knownOperators.has(operator);
}

function firstDefined(problems: readonly (string | undefined)[]): string | undefined {
  return problems.find((problem) => problem !== undefined);
}

/** A label name part (and a value's form): alphanumeric at both ends, `-`, `_` or `.` between. */
const labelNamePattern = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** A DNS-1123 subdomain, the form of a label key's prefix. */
const dnsSubdomainPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const maxLabelNameLength = 63;
const maxPrefixLength = 253;

/** Why `key` cannot be a label key (Kubernetes' qualified name: `[prefix/]name`), or undefined. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split("/");
  if (parts.length > 2) return `key ${JSON.stringify(key)} is not a label key: it may hold one "/" at most`;
  const name = parts.at(-1) ?? "";
  const prefix = parts.length === 2 ? (parts[0] ?? "") : undefined;
  if (prefix !== undefined && (prefix === "" || prefix.length > maxPrefixLength || !dnsSubdomainPattern.test(prefix)))
    return `key ${JSON.stringify(key)} is not a label key: its prefix must be a lower-case DNS subdomain of at most ${maxPrefixLength} characters`;
  if (name.length > maxLabelNameLength || !labelNamePattern.test(name))
    return `key ${JSON.stringify(key)} is not a label key: its name must be 1 to ${maxLabelNameLength} alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character`;
  return undefined;
}

/** Why `value` cannot be the value of label `key`, or undefined; the empty value is a value. */
export function labelValueProblem(key: string, value: string): string | undefined {
  if (value === "" || (value.length <= maxLabelNameLength && labelNamePattern.test(value))) return undefined;
  return `${key}: value ${JSON.stringify(value)} is not a label value: it must be empty or at most ${maxLabelNameLength} alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character`;
}
