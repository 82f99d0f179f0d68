/**
 * Kubernetes name rules (apimachinery's IsDNS1123Label / IsDNS1123Subdomain), re-stated so
 * packages/api needs no client library. They decide whether a sync's derived names (reconciler,
 * ServiceAccount, labels) will be accepted before anything is created.
 */

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const maxLabelLength = 63;
const maxSubdomainLength = 253;

/** Why `value` is not a DNS-1123 label (letters, digits, '-', ≤ 63), or [] when it is. */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > maxLabelLength) errors.push(`must be no more than ${maxLabelLength} characters`);
  if (!dns1123Label.test(value)) {
    errors.push(
      "must consist of lower case alphanumeric characters or '-', and start and end with an alphanumeric character",
    );
  }
  return errors;
}

/** Why `value` is not a DNS-1123 subdomain (labels joined by '.', ≤ 253), or [] when it is. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > maxSubdomainLength) errors.push(`must be no more than ${maxSubdomainLength} characters`);
  if (value === "" || !value.split(".").every((part) => dns1123Label.test(part))) {
    errors.push(
      "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
    );
  }
  return errors;
}

export function isDns1123Label(value: string): boolean {
  return dns1123LabelErrors(value).length === 0;
}

export function isDns1123Subdomain(value: string): boolean {
  return dns1123SubdomainErrors(value).length === 0;
}
