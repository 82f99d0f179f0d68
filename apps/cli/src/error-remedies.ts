/** What an on-call engineer can do about an error, by its KNV code: a line beside the message. */

const rbacRemedy =
  "Grant the reconciler's ServiceAccount the permission named (a RoleBinding in the namespace for a RepoSync).";

const remedies: Readonly<Record<string, string>> = {
  KNV1006: "Fix the YAML or JSON of the file named in the message and push a commit.",
  KNV1010:
    "Remove the reserved annotation (configsync.gke.io/, configmanagement.gke.io/, driftless.dev/) from the declared object.",
  KNV1011: "Remove the reserved label from the declared object.",
  KNV1021: "Install the CRD that serves this kind first, or declare it in the same source; then push.",
  KNV1029: "Two files declare the same object: keep one of them.",
  KNV1036: "Rename the object: metadata.name must be a valid Kubernetes name.",
  KNV1055: "Rename the namespace: a Namespace name is at most 63 lowercase letters, digits and '-'.",
  KNV1045: "Remove the field the source may not set (status, ownerReferences, resourceVersion, ...).",
  KNV1047: "Remove the custom resources of the CRD before (or with) the CRD itself.",
  KNV1053: "Set metadata.namespace on the namespaced object.",
  KNV1058: "A RepoSync may only declare objects of its own namespace: move the object to a RootSync's source.",
  KNV1060: "Another sync manages this object: declare it in one source only.",
  KNV1061: "Fix the sync's spec (kubectl edit the RootSync/RepoSync); the message names the field.",
  KNV1068: "Run `driftless hydrate DIR` locally to see kustomize's or helm's error, fix the kustomization, push.",
  KNV1069: "A sync may not declare itself: remove it from its own source.",
  KNV2002: "The API server failed a request: check its health; the reconciler retries by itself.",
  KNV2004:
    "Check the repository URL, branch or revision, and the credentials Secret named in spec; the reconciler retries by itself.",
  KNV2005:
    "Something else keeps changing a managed object: find the other writer (kubectl get -o yaml shows managedFields).",
  KNV2006:
    'Restore the files, or annotate the sync with configsync.gke.io/allow-empty-source: "true" if emptying is intended.',
  KNV2008: "A write lost a race; the next pass retries it.",
  KNV2009: "Look at the object named: describe it for its events; an object that never becomes Current holds the pass.",
  KNV2010: "Look at the object named in the message.",
  KNV2013: rbacRemedy,
  KNV2016: "Transient: the reconciler retries by itself.",
};

/** Config Sync's failsafe shares KNV2006 with the empty source, but allow-empty-source does not lift it. */
const allNamespacesRemedy =
  "Restore a Namespace, or delete the Namespaces in two commits: all but one, then the last (allow-empty-source does not lift this).";

/**
 * By code, except that an apply refused by RBAC (KNV2009, as Config Sync reports it) asks for the permission,
 * and a commit deleting every Namespace (KNV2006) is answered with how to do that.
 */
export function remedyFor(code: string, message = ""): string {
  if (code === "KNV2009" && /\bis forbidden: User\b/.test(message)) return rbacRemedy;
  if (code === "KNV2006" && message.includes("would delete all Namespaces")) return allNamespacesRemedy;
  const known = remedies[code];
  if (known !== undefined) return known;
  if (code.startsWith("KNV1")) return "Fix the source at the file named in the message, then push a commit.";
  if (code.startsWith("KNV2")) return "A problem on the cluster side: look at the object or permission named.";
  return "Read the message; the reconciler's log has the details.";
}
