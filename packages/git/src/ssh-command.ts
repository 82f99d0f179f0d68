/**
 * Builds GIT_SSH_COMMAND for `auth: ssh`.
 *
 * Config Sync semantics: the key comes from Secret key `ssh`; when Secret key `known_hosts` is
 * present the server's host key must be in it (strict checking), and when it is absent the host
 * key is not checked at all (Config Sync keeps that default for backwards compatibility).
 * Everything else about ssh is pinned so that the host's ~/.ssh (config, agent, other keys,
 * known_hosts) can neither help nor interfere.
 */

export interface SshCommandOptions {
  readonly keyPath: string;
  /** Absent: host key checking is off. */
  readonly knownHostsPath?: string | undefined;
  readonly connectTimeoutSeconds?: number;
  readonly sshBinary?: string;
}

export function sshCommand(options: SshCommandOptions): string {
  const hostKeyOptions =
    options.knownHostsPath === undefined
      ? ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null"]
      : ["StrictHostKeyChecking=yes", `UserKnownHostsFile=${options.knownHostsPath}`];
  const sshOptions = [
    // Only this key: not keys from an agent or ~/.ssh, which could authenticate as someone else.
    "IdentitiesOnly=yes",
    "IdentityAgent=none",
    // Never prompt (for a passphrase or a password): fail, and let the error say why.
    "BatchMode=yes",
    "PasswordAuthentication=no",
    "KbdInteractiveAuthentication=no",
    "GlobalKnownHostsFile=/dev/null",
    ...hostKeyOptions,
    `ConnectTimeout=${String(options.connectTimeoutSeconds ?? 30)}`,
    // Drops "Warning: Permanently added ..." noise; real failures are logged at ERROR.
    "LogLevel=ERROR",
  ];
  const words = [options.sshBinary ?? "ssh", "-F", "/dev/null", "-i", options.keyPath];
  for (const option of sshOptions) words.push("-o", option);
  return words.map(shellQuote).join(" ");
}

/** git runs GIT_SSH_COMMAND through the shell; every word is quoted so paths cannot inject. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./=:@,+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
