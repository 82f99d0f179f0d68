/**
 * The Secrets an OCI or Helm source names, read from the sync's namespace: basic credentials
 * (auth token: keys `username` and `password`) and a CA bundle (caCertSecretRef: key `cert`).
 */
import { DriftlessError, ErrorClass, KnvCode, type SecretReference } from "@driftless/api";
import type { KubeClient } from "@driftless/kube";
import { secretData } from "./credentials.ts";
import type { NamedReads } from "./named-watch.ts";

export interface ArtifactCredentials {
  readonly basic?: { readonly username: string; readonly password: string };
  readonly caCert?: string;
}

interface ArtifactAuthSpec {
  readonly auth: string;
  readonly secretRef?: SecretReference | null;
  readonly caCertSecretRef?: SecretReference | null;
}

/** A Secret that exists but lacks a key the auth type reads: an invalid sync (KNV1061), as for Git. */
export class MissingSecretKeyError extends DriftlessError {
  constructor(namespace: string, name: string, key: string, field: string) {
    super({
      code: KnvCode.InvalidSync,
      errorClass: ErrorClass.Terminal,
      message: `${JSON.stringify(key)} key is not present in ${JSON.stringify(`${namespace}/${name}`)} Secret (named by ${field})`,
    });
  }
}

/**
 * A caCertSecretRef Secret without the key `cert`: KNV1061 in Config Sync's words (its reconciler-manager's
 * MissingKeyInCACertSecret, for every source type), where the Secret is following.
 */
export class MissingCaCertKeyError extends DriftlessError {
  constructor(namespace: string, name: string, field: string) {
    super({
      code: KnvCode.InvalidSync,
      errorClass: ErrorClass.Terminal,
      message: `caCertSecretRef was set, but "cert" key is not present in ${JSON.stringify(name)} Secret (named by ${field}, in namespace ${namespace})`,
    });
  }
}

/** `field` is `spec.oci` or `spec.helm`, for messages; `reads` is told each Secret read (secret-watch.ts). */
export async function readArtifactCredentials(
  client: KubeClient,
  namespace: string,
  spec: ArtifactAuthSpec,
  field: string,
  reads?: NamedReads,
): Promise<ArtifactCredentials> {
  const secretName = spec.auth === "token" ? spec.secretRef?.name : undefined;
  const caName = spec.caCertSecretRef?.name;
  const key = (data: Record<string, string>, name: string, k: string, at: string): string => {
    const value = data[k];
    if (value === undefined) throw new MissingSecretKeyError(namespace, name, k, at);
    return value;
  };
  let basic: ArtifactCredentials["basic"];
  if (secretName !== undefined) {
    const at = `${field}.secretRef`;
    const data = await secretData(client, namespace, secretName, at, reads);
    basic = { username: key(data, secretName, "username", at), password: key(data, secretName, "password", at) };
  }
  let caCert: string | undefined;
  if (caName !== undefined) {
    const at = `${field}.caCertSecretRef`;
    caCert = (await secretData(client, namespace, caName, at, reads))["cert"];
    if (caCert === undefined) throw new MissingCaCertKeyError(namespace, caName, at);
  }
  return { ...(basic === undefined ? {} : { basic }), ...(caCert === undefined ? {} : { caCert }) };
}
