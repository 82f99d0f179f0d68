/**
 * Credentials written into a repository URL (`https://user:token@host/repo`) must never reach
 * status, Events or logs. These helpers mask them wherever a URL is shown: alone (`redactUrl`),
 * inside free text such as git's stderr (`redactCredentials`), or anywhere in a JSON value.
 */

const Mask = "***";

// User-info ends at the last "@" before the path (WHATWG URL rules), so a password holding an
// unescaped "@" is masked whole. In text, whitespace, a quote or a bracket also ends a URL; a JSON
// escape (`\"`) does not, so a log line is redacted as a whole and stays valid JSON.
const leadingUserInfo = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i;
const urlUserInfo = /\b([a-z][a-z0-9+.-]*:\/\/)((?:[^\s/?#"<>\\]|\\.)*)@/gi;
// scp-like `user:password@host:path`; `git@host:path` has no password and is left alone.
const scpPassword = /^([^@/\s:]+):[^/\s]*@(?=[^/:\s]+:)/;

function maskUserInfo(scheme: string, userInfo: string): string {
  // The ssh user (`git`) is what a user needs to debug a key problem, and is never a token.
  if (scheme.toLowerCase().includes("ssh")) return `${scheme}${userInfo.split(":")[0] ?? ""}@`;
  return `${scheme}${Mask}@`;
}

/**
 * A URL safe to show: the user-info of an http(s) (or any scheme) URL is masked, since a token is
 * often written as the user; for ssh only the password is dropped.
 */
export function redactUrl(url: string): string {
  const scp = scpPassword.exec(url);
  if (scp !== null) return `${scp[1] ?? ""}@${url.slice(scp[0].length)}`;
  return url.replace(leadingUserInfo, (_match, scheme: string, userInfo: string) => maskUserInfo(scheme, userInfo));
}

/** `text` with the user-info of every URL in it masked, and every listed secret value too. */
export function redactCredentials(text: string, secrets: readonly string[] = []): string {
  let result = text.includes("://")
    ? text.replace(urlUserInfo, (_match, scheme: string, userInfo: string) => maskUserInfo(scheme, userInfo))
    : text;
  for (const secret of secrets) {
    if (secret !== "") result = result.split(secret).join(Mask);
  }
  return result;
}

/** A copy of a JSON value (a status, an Event) with `redactCredentials` applied to every string. */
export function redactCredentialsIn<T>(value: T): T {
  return redactValue(value) as T;
}

function redactValue(value: unknown): unknown {
  if (typeof value === "string") return redactCredentials(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactValue(inner)]));
  }
  return value;
}
