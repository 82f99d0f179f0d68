/**
 * Kubernetes name rules, checked before apply so a bad name is reported against its file (KNV1036)
 * instead of as an API server rejection halfway through a sync.
 */

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Names of most objects: at most 253 characters of lower-case alphanumerics, '-' and '.'. */
export function dns1123SubdomainProblem(name: string): string | undefined {
  if (name.length > 253) return "must be no more than 253 characters";
  if (!dns1123Subdomain.test(name)) {
    return "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Namespace names (and so metadata.namespace): at most 63 characters, no dots. */
export function dns1123LabelProblem(name: string): string | undefined {
  if (name.length > 63) return "must be no more than 63 characters";
  if (!dns1123Label.test(name)) {
    return "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** RBAC names only need to be usable as one URL path segment. */
export function pathSegmentProblem(name: string): string | undefined {
  if (name === "." || name === "..") return `may not be "${name}"`;
  if (name.includes("/") || name.includes("%")) return "may not contain '/' or '%'";
  return undefined;
}
