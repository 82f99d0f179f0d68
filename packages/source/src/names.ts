/**
 * RBAC's name rule. Other names are DNS-1123 labels or subdomains (checked with @driftless/api's
 * helpers); RBAC objects only need a valid URL path segment, so `system:aggregate-to-edit` is fine.
 */
export function pathSegmentProblem(name: string): string | undefined {
  if (name === "." || name === "..") return `may not be "${name}"`;
  if (name.includes("/") || name.includes("%")) return "may not contain '/' or '%'";
  return undefined;
}
