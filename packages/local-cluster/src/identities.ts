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

export interface Identities {
  readonly admin: Identity;
  readonly user: Identity;
}

export function newIdentities(): Identities {
  const token = (): string => randomBytes(24).toString("hex");
  return {
    admin: { user: "driftless-admin", uid: "driftless-admin", groups: ["system:masters"], token: token() },
    user: { user: "driftless-user", uid: "driftless-user", groups: ["driftless:users"], token: token() },
  };
}

/** kube-apiserver's --token-auth-file format: token,user,uid,"group1,group2". */
export function tokenAuthFile(identities: Identities): string {
  return (
    [identities.admin, identities.user]
      .map((id) => `${id.token},${id.user},${id.uid},"${id.groups.join(",")}"`)
      .join("\n") + "\n"
  );
}
