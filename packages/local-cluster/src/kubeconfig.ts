import { stringify } from "yaml";
import type { Identity } from "./identities.ts";

export interface KubeconfigInput {
  readonly server: string;
  /** PEM of the CA that signed the serving certificate. */
  readonly caData: string;
  readonly identity: Identity;
  readonly contextName: string;
}

/** A kubeconfig with one cluster, one user and one context, as kubectl and @kubernetes/client-node read it. */
export function renderKubeconfig(input: KubeconfigInput): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "driftless-local",
        cluster: { server: input.server, "certificate-authority-data": Buffer.from(input.caData).toString("base64") },
      },
    ],
    users: [{ name: input.identity.user, user: { token: input.identity.token } }],
    contexts: [{ name: input.contextName, context: { cluster: "driftless-local", user: input.identity.user } }],
    "current-context": input.contextName,
    preferences: {},
  });
}
