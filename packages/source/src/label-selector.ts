/**
 * Kubernetes label selectors (`matchLabels`, `matchExpressions` with In, NotIn, Exists, DoesNotExist)
 * as ClusterSelectors and NamespaceSelectors declare them in `spec.selector`.
 */
import { isJsonObject } from "./json.ts";
import type { JsonObject, JsonValue } from "./json.ts";

export type Labels = Readonly<Record<string, string>>;
export type LabelMatcher = (labels: Labels) => boolean;

/** The selector, or why it is not one. An empty selector is refused, as Config Sync refuses it. */
export function parseLabelSelector(spec: JsonValue | undefined): { matcher: LabelMatcher } | { problem: string } {
  if (!isJsonObject(spec)) return { problem: "spec.selector is missing; it must select something" };
  const tests: LabelMatcher[] = [];
  const matchLabels = spec["matchLabels"];
  if (matchLabels !== undefined) {
    if (!isJsonObject(matchLabels)) return { problem: "spec.selector.matchLabels must be a map of strings" };
    for (const [key, value] of Object.entries(matchLabels)) {
      if (typeof value !== "string") return { problem: `spec.selector.matchLabels.${key} must be a string` };
      tests.push((labels) => labels[key] === value);
    }
  }
  const expressions = spec["matchExpressions"];
  if (expressions !== undefined) {
    if (!Array.isArray(expressions)) return { problem: "spec.selector.matchExpressions must be a list" };
    for (const expression of expressions) {
      const parsed = isJsonObject(expression) ? parseExpression(expression) : { problem: "not an object" };
      if ("problem" in parsed) return { problem: `spec.selector.matchExpressions: ${parsed.problem}` };
      tests.push(parsed.matcher);
    }
  }
  if (tests.length === 0) return { problem: "spec.selector is empty; it must select something" };
  return { matcher: (labels) => tests.every((test) => test(labels)) };
}

function parseExpression(expression: JsonObject): { matcher: LabelMatcher } | { problem: string } {
  const { key, operator, values } = expression;
  if (typeof key !== "string" || key === "") return { problem: "each expression needs a key" };
  const list = values === undefined ? [] : values;
  if (!Array.isArray(list) || !list.every((v): v is string => typeof v === "string"))
    return { problem: `${key}: values must be a list of strings` };
  switch (operator) {
    case "In":
    case "NotIn": {
      if (list.length === 0) return { problem: `${key}: ${operator} needs at least one value` };
      const set = new Set(list);
      const has = (labels: Labels): boolean => labels[key] !== undefined && set.has(labels[key]);
      return { matcher: operator === "In" ? has : (labels) => !has(labels) };
    }
    case "Exists":
    case "DoesNotExist": {
      if (list.length > 0) return { problem: `${key}: ${operator} takes no values` };
      return {
        matcher: operator === "Exists" ? (l) => l[key] !== undefined : (l) => l[key] === undefined,
      };
    }
    default:
      return { problem: `${key}: unknown operator ${JSON.stringify(operator)}` };
  }
}
