import { randomBytes } from "node:crypto";

/**
 * Static-token identities of the local control plane. The admin is in system:masters (bypasses RBAC);
 * the ordinary user has no bindings at all, so tests can prove that RBAC in manifests/ grants exactly
 * what it should.
 */
export interface Identity {
  readonly user: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly token: string;
}

/**
 * The node's components, under the names Kubernetes' own authorizers know: the Node authorizer
 * grants system:node:<name> in system:nodes what its kubelet needs, and the bootstrap RBAC bindings
 * cover system:kube-proxy and system:kube-scheduler.
 */
export interface NodeIdentities {
  readonly kubelet: Identity;
  readonly kubeProxy: Identity;
  readonly kubeScheduler: Identity;
}

export interface Identities {
  readonly admin: Identity;
  readonly user: Identity;
  /** Present when the control plane was started for a node. */
  readonly node?: NodeIdentities;
}

const token = (): string => randomBytes(24).toString("hex");

export function newIdentities(options: { readonly nodeName?: string } = {}): Identities {
  const identities: Identities = {
    admin: { user: "driftless-admin", uid: "driftless-admin", groups: ["system:masters"], token: token() },
    user: { user: "driftless-user", uid: "driftless-user", groups: ["driftless:users"], token: token() },
  };
  if (options.nodeName === undefined) return identities;
  const kubelet = `system:node:${options.nodeName}`;
  return {
    ...identities,
    node: {
      kubelet: { user: kubelet, uid: kubelet, groups: ["system:nodes"], token: token() },
      kubeProxy: { user: "system:kube-proxy", uid: "system:kube-proxy", groups: [], token: token() },
      kubeScheduler: { user: "system:kube-scheduler", uid: "system:kube-scheduler", groups: [], token: token() },
    },
  };
}

/** kube-apiserver's --token-auth-file format: token,user,uid,"group1,group2". */
export function tokenAuthFile(identities: Identities): string {
  const node = identities.node;
  const all = [identities.admin, identities.user, ...(node ? [node.kubelet, node.kubeProxy, node.kubeScheduler] : [])];
  return all.map((id) => `${id.token},${id.user},${id.uid},"${id.groups.join(",")}"`).join("\n") + "\n";
}
