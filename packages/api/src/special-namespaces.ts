/** Namespaces Config Sync never deletes (its differ.SpecialNamespaces): declared ones are detached, never pruned. */
const specialNamespaces: ReadonlySet<string> = new Set([
  "default",
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "gatekeeper-system",
]);

export function isSpecialNamespace(name: string): boolean {
  return specialNamespaces.has(name);
}
