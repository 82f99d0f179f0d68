import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ErrorClass } from "@driftless/api";
import { credentialHelperEnv, isValidCredentialValue } from "./credential-helper.ts";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { configEnv, safetyConfig } from "./git-env.ts";
import type { RepoUrl } from "./repo-url.ts";
import { sshCommand } from "./ssh-command.ts";
import { GitAuthType } from "./types.ts";
import type { GitCredentials, GitLogger } from "./types.ts";

/**
 * Turns credentials into what one git invocation needs: environment variables, plus private
 * files for what ssh and libcurl can only read from a file (key, known_hosts, CA bundle, cookie jar). The
 * files live in a fresh 0700 directory and are deleted by `dispose`, so a key is on disk only
 * while a git process that needs it runs.
 */
export interface AuthSession {
  readonly env: Readonly<Record<string, string>>;
  /** Values to scrub from any text shown to users. */
  readonly secrets: readonly string[];
  dispose(): Promise<void>;
}

export interface OpenAuthOptions {
  readonly credentials: GitCredentials;
  readonly repo: RepoUrl;
  /** Redacted URL, for messages. */
  readonly displayRepo: string;
  readonly noSSLVerify: boolean;
  /** git's http.proxy for this fetch (FetchPlan.proxy). */
  readonly proxy?: string | undefined;
  readonly tempRoot: string;
  readonly logger: GitLogger;
}

export async function openAuthSession(options: OpenAuthOptions): Promise<AuthSession> {
  const { credentials } = options;
  const env: Record<string, string> = {};
  const config: (readonly [string, string])[] = [
    ...safetyConfig,
    // Run `git gc --auto` in the foreground, inside our timeout and process group, instead of
    // detached where it could race the next fetch for the repository's locks.
    ["gc.autoDetach", "false"],
    // Prune what no ref reaches at once, not after two weeks (as git-sync): every poll that fetches leaves
    // the previous commit unreachable, and the cache would grow with the commit rate. Only we use the cache.
    ["gc.pruneExpire", "now"],
    ["protocol.version", "2"],
  ];
  const secrets: string[] = [];
  let tempDir: string | undefined;
  const privateFile = async (name: string, content: string): Promise<string> => {
    tempDir ??= await mkdtemp(join(options.tempRoot, "driftless-git-auth-"));
    await chmod(tempDir, 0o700);
    const path = join(tempDir, name);
    await writeFile(path, content, { mode: 0o600 });
    return path;
  };

  try {
    const http = httpCredentials(options);
    if (http !== undefined) {
      const helper = credentialHelperEnv(http);
      config.push(...helper.config);
      Object.assign(env, helper.env);
      secrets.push(http.password);
      // A token written as the URL's user (`https://<token>@host`) is a secret; a Secret's `username` is not
      // (Config Sync and git-sync show it), and scrubbing one such as `git` garbled git's messages (`remote.***`).
      if (credentials.auth !== GitAuthType.Token && http.password === "") secrets.push(http.username);
    }
    if (credentials.auth === GitAuthType.Ssh) {
      // OpenSSH refuses a key without its final newline ("error in libcrypto"); Secrets created
      // from a literal often lose it, and CRLF from a Windows editor breaks parsing too.
      const key = `${credentials.privateKey.replace(/\r\n/g, "\n").trimEnd()}\n`;
      const keyPath = await privateFile("id", key);
      const knownHostsPath =
        credentials.knownHosts === undefined ? undefined : await privateFile("known_hosts", credentials.knownHosts);
      if (knownHostsPath === undefined) {
        options.logger.warn(
          "spec.git.auth is ssh and the Secret has no known_hosts key: the server's host key is not verified",
          {
            repo: options.displayRepo,
          },
        );
      }
      env.GIT_SSH_COMMAND = sshCommand({ keyPath, knownHostsPath });
      env.GIT_SSH_VARIANT = "ssh";
    }
    if (credentials.auth === GitAuthType.CookieFile) {
      // git sends the jar's cookies for matching hosts on every HTTP request; it never writes the file back
      // (http.saveCookies stays off), so the Secret's jar is read as given.
      config.push(["http.cookieFile", await privateFile("cookie_file", credentials.cookieFile)]);
      secrets.push(...cookieValues(credentials.cookieFile));
    }
    if (credentials.caCert !== undefined) env.GIT_SSL_CAINFO = await privateFile("ca.crt", credentials.caCert);
    if (options.noSSLVerify) env.GIT_SSL_NO_VERIFY = "true";
    if (options.proxy !== undefined) {
      // The config wins over the http(s)_proxy variables git would otherwise read from the environment.
      config.push(["http.proxy", options.proxy]);
      secrets.push(...proxyPasswords(options.proxy));
    }
  } catch (error) {
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
    throw error;
  }

  const dir = tempDir;
  return {
    env: { ...env, ...configEnv(config) },
    secrets: secrets.filter((secret) => secret !== ""),
    dispose: async () => {
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Token from the Secret, else a password written into the URL (lifted out by parseRepoUrl). */
function httpCredentials(options: OpenAuthOptions): { origin: string; username: string; password: string } | undefined {
  const { credentials, repo } = options;
  if (repo.origin === undefined) return undefined;
  let username: string | undefined;
  let password: string | undefined;
  if (credentials.auth === GitAuthType.Token) {
    username = credentials.username;
    password = credentials.token;
  } else if (repo.username !== undefined || repo.password !== undefined) {
    // `https://<token>@host/...` is a common way to write a token: pass it on with an empty password.
    username = repo.username ?? "";
    password = repo.password ?? "";
  }
  if (username === undefined || password === undefined) return undefined;
  // `echo token | base64` leaves a newline at the end of the Secret value; it is never part of a token.
  username = username.replace(/[\r\n]+$/, "");
  password = password.replace(/[\r\n]+$/, "");
  if (!isValidCredentialValue(username) || !isValidCredentialValue(password)) {
    throw new GitFetchError({
      reason: GitFailureReason.AuthRejected,
      errorClass: ErrorClass.Terminal,
      repo: options.displayRepo,
      message: `the username or token for ${options.displayRepo} contains a line break; check the Secret named by spec.git.secretRef (a trailing newline from "echo" is a common cause)`,
    });
  }
  return { origin: repo.origin, username, password };
}

/** The values in a Netscape cookie jar (the seventh tab-separated field), to scrub from messages. */
function cookieValues(jar: string): string[] {
  return jar
    .split(/\r?\n/)
    .filter((line) => !line.startsWith("#") || line.startsWith("#HttpOnly_"))
    .map((line) => line.split("\t")[6]?.trim() ?? "")
    .filter((value) => value !== "");
}

/**
 * The password of a proxy URL (`http://user:pass@proxy:3128`) as written and decoded, to scrub from
 * messages. User-info runs to the last "@", as `redactUrl` masks it, so a raw "#" or "/" cannot cut it short.
 */
function proxyPasswords(proxy: string): string[] {
  const userInfo = /^[a-z][a-z0-9+.-]*:\/\/(.*)@/is.exec(proxy)?.[1];
  const colon = userInfo?.indexOf(":") ?? -1;
  if (userInfo === undefined || colon < 0) return [];
  const raw = userInfo.slice(colon + 1);
  return raw === "" ? [] : [...new Set([raw, decoded(raw)])];
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
