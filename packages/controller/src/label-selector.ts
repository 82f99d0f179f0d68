/**
 * Equality-based label selectors (`a=b`, `a==b`, `a!=b`, `a`, `!a`, comma-separated), evaluated
 * locally with exactly the meaning the API server gives them, so the manager can re-check a sync
 * it fetched by name against the selector its watches use.
 */
type Requirement = { readonly key: string; readonly op: "=" | "!=" | "exists" | "!exists"; readonly value?: string };

export type LabelSelector = (labels: Readonly<Record<string, string>> | undefined) => boolean;

export function parseLabelSelector(selector: string): LabelSelector {
  const requirements: Requirement[] = [];
  for (const part of selector.split(",").map((p) => p.trim())) {
    if (part === "") continue;
    const match = /^(!?)([A-Za-z0-9._/-]+)\s*(?:(==|=|!=)\s*([A-Za-z0-9._-]*))?$/.exec(part);
    if (match === null)
      throw new Error(`unsupported label selector term "${part}" (use key=value, key!=value, key or !key)`);
    const [, not, key = "", op, value] = match;
    if (op === undefined) requirements.push({ key, op: not === "!" ? "!exists" : "exists" });
    else if (not === "!") throw new Error(`unsupported label selector term "${part}"`);
    else requirements.push({ key, op: op === "!=" ? "!=" : "=", value: value ?? "" });
  }
  return (labels) =>
    requirements.every((r) => {
      const actual = labels?.[r.key];
      switch (r.op) {
        case "exists":
          return actual !== undefined;
        case "!exists":
          return actual === undefined;
        case "=":
          return actual === r.value;
        case "!=":
          return actual !== r.value;
      }
    });
}
