import { DriftlessError, ErrorClass, KnvCode, type RSync } from "@driftless/api";
import { credentialsFromSecretData, type GitCredentials } from "@driftless/git";
import type { KubeClient } from "@driftless/kube";
import type { NamedReads } from "./named-watch.ts";
import { secretMapping } from "./rsync.ts";

/**
 * A Secret the spec names but the sync's namespace does not hold: the user must create it. KNV1061, an
 * invalid sync, as Config Sync's reconciler-manager reports it (its words lead the message).
 */
export class MissingSecretError extends DriftlessError {
  constructor(namespace: string, name: string, field: string) {
    super({
      code: KnvCode.InvalidSync,
      errorClass: ErrorClass.Stalled,
      // Config Sync's sentence, to the letter (its e2e and users match on it); where to create it follows.
      message: `Secret ${name} not found: create one to allow client authentication (named by ${field}, in namespace ${namespace})`,
    });
  }
}

export async function secretData(
  client: KubeClient,
  namespace: string,
  name: string,
  field: string,
  reads?: NamedReads,
): Promise<Record<string, string>> {
  const secret = await client.get(secretMapping, namespace, name);
  reads?.read(name, secret);
  if (secret === undefined) throw new MissingSecretError(namespace, name, field);
  const data = (secret["data"] ?? {}) as Record<string, string>;
  // Secret data is base64 on the wire; decode once here and never log it.
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
}

/**
 * Reads the Secrets the spec names (secretRef, caCertSecretRef) from the sync's namespace and decodes them for
 * git; `reads` is told each one read (secret-watch.ts).
 */
export async function readGitCredentials(client: KubeClient, sync: RSync, reads?: NamedReads): Promise<GitCredentials> {
  const git = sync.spec.git;
  if (git === undefined) return { auth: "none" };
  const namespace = sync.metadata.namespace ?? "";
  const secretName = git.secretRef?.name;
  const caName = git.caCertSecretRef?.name;
  return credentialsFromSecretData({
    auth: git.auth,
    repo: git.repo,
    secretName,
    secretData:
      git.auth !== "none" && secretName !== undefined
        ? await secretData(client, namespace, secretName, "spec.git.secretRef", reads)
        : undefined,
    caCertSecretName: caName,
    caCertData:
      caName !== undefined ? await secretData(client, namespace, caName, "spec.git.caCertSecretRef", reads) : undefined,
  });
}
