/** A Kubernetes LabelSelector (matchLabels and matchExpressions), evaluated as the API server does. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { key: string; operator: string; values?: readonly string[] }[];
}

export function selects(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every((e) => {
    const value = labels[e.key];
    switch (e.operator) {
      case "Exists":
        return value !== undefined;
      case "DoesNotExist":
        return value === undefined;
      case "In":
        return value !== undefined && (e.values ?? []).includes(value);
      case "NotIn":
        return value === undefined || !(e.values ?? []).includes(value);
      default:
        throw new Error(`unknown operator ${e.operator}`);
    }
  });
  return byLabel && byExpression;
}
