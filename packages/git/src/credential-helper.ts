/**
 * How a username and token reach git for http(s): an inline credential helper, configured through
 * GIT_CONFIG_* environment variables, that prints two other environment variables.
 *
 * Why this and not the alternatives:
 * - A URL with user:token@ or `-c http.extraHeader=...` puts the token in argv, which `ps` shows
 *   to every user on the machine; `git remote add` with such a URL writes it to the repo config.
 * - http.extraHeader via GIT_CONFIG_VALUE_n keeps it out of argv, but the header is sent on every
 *   request to any host, including a redirect to another origin.
 * - GIT_ASKPASS needs a script on disk and answers any prompt from any host.
 * - A helper keyed `credential.<scheme://host:port>.helper` is asked only for that origin, only
 *   after the server answers 401, by git's own credential code. The token lives only in the
 *   environment of this one git process tree (readable only by the same user, like our own memory),
 *   never in argv, never in a file. The helper answers only `get`, so git's `store`/`erase`
 *   calls do nothing.
 */

export const usernameVariable = "DRIFTLESS_GIT_USERNAME";
export const passwordVariable = "DRIFTLESS_GIT_PASSWORD";

/** The helper program; contains no secret, only the names of the variables that hold them. */
export const credentialHelperProgram =
  `!f() { test "$1" = get || exit 0; ` +
  `printf 'username=%s\\npassword=%s\\n' "$${usernameVariable}" "$${passwordVariable}"; }; f`;

export interface HttpCredentials {
  readonly origin: string;
  readonly username: string;
  readonly password: string;
}

/** Config pairs and environment for one git process tree. */
export function credentialHelperEnv(credentials: HttpCredentials): {
  readonly config: readonly (readonly [string, string])[];
  readonly env: Readonly<Record<string, string>>;
} {
  return {
    config: [
      // An empty value first resets any helper list inherited from elsewhere.
      [`credential.${credentials.origin}.helper`, ""],
      [`credential.${credentials.origin}.helper`, credentialHelperProgram],
    ],
    env: { [usernameVariable]: credentials.username, [passwordVariable]: credentials.password },
  };
}

/** The credential protocol is line-based: a newline in a value would inject attributes. */
export function isValidCredentialValue(value: string): boolean {
  return !/[\r\n\0]/.test(value);
}
