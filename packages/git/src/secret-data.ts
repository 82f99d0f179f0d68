import { ErrorClass, gitAuthAlternative, redactUrl } from "@driftless/api";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { GitAuthType } from "./types.ts";
import type { GitCredentials } from "./types.ts";

/**
 * Config Sync's Secret layout, mapped to typed credentials. The caller reads the Secrets from
 * Kubernetes and decodes them (this package never talks to the API server):
 * - `secretRef` with `auth: token`: keys `username` and `token`;
 * - `secretRef` with `auth: ssh`: key `ssh` (private key) and optional `known_hosts`;
 * - `secretRef` with `auth: cookiefile`: key `cookie_file` (a Netscape cookie jar);
 * - `caCertSecretRef`: key `cert`;
 * - `secretRef` with `auth: token` or `cookiefile`: optional `https_proxy` and `http_proxy`, the proxy for an
 *   https:// or http:// repository (spec.git.proxy, when set, wins).
 */
export const SecretKey = {
  Username: "username",
  Token: "token",
  Ssh: "ssh",
  KnownHosts: "known_hosts",
  CookieFile: "cookie_file",
  CaCert: "cert",
  HttpsProxy: "https_proxy",
  HttpProxy: "http_proxy",
} as const;

export interface SecretDataInput {
  /** `spec.git.auth`; empty means none. */
  readonly auth: string | undefined;
  /** Decoded data of the Secret named by `spec.git.secretRef.name`, if any. */
  readonly secretData?: Readonly<Record<string, string>> | undefined;
  /** Decoded data of the Secret named by `spec.git.caCertSecretRef.name`, if any. */
  readonly caCertData?: Readonly<Record<string, string>> | undefined;
  /** For messages: the Secret names. */
  readonly secretName?: string | undefined;
  readonly caCertSecretName?: string | undefined;
  /** `spec.git.repo`, for the error's `repo` (redacted here). */
  readonly repo: string;
}

export function credentialsFromSecretData(input: SecretDataInput): GitCredentials {
  const repo = redactUrl(input.repo);
  const auth = input.auth === undefined || input.auth === "" ? GitAuthType.None : input.auth;
  const data = input.secretData ?? {};
  const secretName = input.secretName ?? "spec.git.secretRef";
  const missing = (key: string): GitFetchError =>
    invalid(
      repo,
      // Config Sync's wording, so its documented message reads the same.
      `git authType was set as ${JSON.stringify(auth)} but ${JSON.stringify(key)} key is not present in ${JSON.stringify(secretName)} Secret`,
    );

  let caCert: string | undefined;
  if (input.caCertData !== undefined) {
    caCert = input.caCertData[SecretKey.CaCert];
    if (caCert === undefined) {
      throw invalid(
        repo,
        `caCertSecretRef was set, but "cert" key is not present in ${JSON.stringify(input.caCertSecretName ?? "spec.git.caCertSecretRef")} Secret`,
      );
    }
  }

  switch (auth) {
    case GitAuthType.None:
      return { auth, caCert };
    case GitAuthType.Token: {
      const username = data[SecretKey.Username];
      const token = data[SecretKey.Token];
      if (token === undefined) throw missing(SecretKey.Token);
      if (username === undefined) throw missing(SecretKey.Username);
      return { auth, username, token, caCert, ...proxiesOf(data) };
    }
    case GitAuthType.CookieFile: {
      const cookieFile = data[SecretKey.CookieFile];
      if (cookieFile === undefined) throw missing(SecretKey.CookieFile);
      return { auth, cookieFile, caCert, ...proxiesOf(data) };
    }
    case GitAuthType.Ssh: {
      const privateKey = data[SecretKey.Ssh];
      if (privateKey === undefined) throw missing(SecretKey.Ssh);
      return { auth, privateKey, knownHosts: data[SecretKey.KnownHosts], caCert };
    }
    default:
      throw invalid(repo, unsupportedAuthMessage(auth));
  }
}

/** The refusal of an auth type driftless does not implement, with what to use instead. */
export function unsupportedAuthMessage(auth: string): string {
  const alternative = gitAuthAlternative(auth);
  const base = `spec.git.auth ${JSON.stringify(auth)} is not supported by driftless (supported: none, token, ssh, cookiefile)`;
  return alternative === undefined ? base : `${base}: ${alternative}`;
}

function proxiesOf(data: Readonly<Record<string, string>>): { httpsProxy?: string; httpProxy?: string } {
  const httpsProxy = nonEmpty(data[SecretKey.HttpsProxy]);
  const httpProxy = nonEmpty(data[SecretKey.HttpProxy]);
  return {
    ...(httpsProxy === undefined ? {} : { httpsProxy }),
    ...(httpProxy === undefined ? {} : { httpProxy }),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

/** A missing key is a configuration error of the sync: KNV1061, terminal until the Secret is fixed. */
function invalid(repo: string, message: string): GitFetchError {
  return new GitFetchError({ reason: GitFailureReason.InvalidSpec, errorClass: ErrorClass.Terminal, repo, message });
}
