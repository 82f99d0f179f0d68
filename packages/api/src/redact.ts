/**
 * Credentials written into a repository URL (`https://user:token@host/repo`) must never reach
 * status, Events or logs. These helpers mask them wherever a URL is shown: alone (`redactUrl`),
 * inside free text such as git's stderr (`redactCredentials`), or anywhere in a JSON value.
 */

const Mask = "***";

// User-info runs from the scheme to the LAST "@" of the URL, whether the URL parses or not: a password
// holding an unescaped "@", "#", "?", "/", "<" or a quote ends no earlier. An "@" in a path or query is
// masked with it, which costs a little of the URL and never a secret.
const scheme = /^[a-z][a-z0-9+.-]*:\/\//i;
const schemeInText = /\b[a-z][a-z0-9+.-]*:\/\//gi;
// `user:password@host` without a scheme: scp-like `user:password@host:path`, or an https URL whose `https://` was
// left out (`oauth2:<token>@gitlab.com/org/repo`, which git reads as ssh to host `oauth2`). `git@host:path` has no
// password and is left alone.
const schemelessPassword = /^([^@/\s:]+):[^/\s]*@(?=[^@/:\s]+(?:[:/]|$))/;
// An image pinned by digest (`app:v1@sha256:<hex>`) has the same shape, and holds no password.
const imageDigest = /@[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}$/;
// A query or fragment parameter named for a credential (`?private_token=`, `&pwd=`, `sig=`, `#access_token=` as
// OAuth's implicit flow writes it): its value, up to the next parameter, space, quote or JSON escape, is masked.
const secretQueryValue =
  /([?&#][^=&#\s"\\]*(?:token|pass|pwd|secret|key|auth|sig|credential|jwt)[^=&#\s"\\]*=)[^&#\s"'\\]+/gi;
// A listed secret this short would mask letters all over a message (a 1-3 character password protects nothing).
const minScrubbedLength = 4;

function maskUserInfo(schemePrefix: string, userInfo: string): string {
  // The ssh user (`git`) is what a user needs to debug a key problem, and is never a token.
  if (schemePrefix.toLowerCase().includes("ssh")) return `${schemePrefix}${userInfo.split(":")[0] ?? ""}`;
  return `${schemePrefix}${Mask}`;
}

/**
 * A URL safe to show: the user-info of an http(s) (or any scheme) URL is masked, since a token is
 * often written as the user; for ssh only the password is dropped. A credential in the query goes too.
 */
export function redactUrl(url: string): string {
  const schemeless = imageDigest.test(url) ? null : schemelessPassword.exec(url);
  if (schemeless !== null) return `${schemeless[1] ?? ""}@${url.slice(schemeless[0].length)}`;
  const prefix = scheme.exec(url)?.[0];
  if (prefix === undefined) return url;
  const at = url.lastIndexOf("@");
  const masked = at < prefix.length ? url : maskUserInfo(prefix, url.slice(prefix.length, at)) + url.slice(at);
  return masked.replace(secretQueryValue, `$1${Mask}`);
}

/** `text` with the user-info of every URL in it masked, and every listed secret value too. */
export function redactCredentials(text: string, secrets: readonly string[] = []): string {
  let result = text.includes("://") ? maskUrlsIn(text) : text;
  for (const secret of secrets) {
    if (secret.length >= minScrubbedLength) result = result.split(secret).join(Mask);
  }
  return result;
}

/**
 * In text a URL runs to whitespace or an unescaped double quote; a JSON escape (`\"`) does not end it,
 * so a log line is redacted as a whole and stays valid JSON (a quote never falls inside what is masked).
 */
function maskUrlsIn(text: string): string {
  let out = "";
  let copied = 0;
  for (const match of text.matchAll(schemeInText)) {
    const start = match.index;
    // A scheme inside a run already scanned belongs to that URL: masked with it.
    if (start < copied) continue;
    const end = urlRunEnd(text, start + match[0].length);
    out += text.slice(copied, start) + redactUrl(text.slice(start, end));
    copied = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

function urlRunEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text[i] ?? "";
    if (c === '"' || /\s/.test(c)) return i;
    i += c === "\\" ? 2 : 1;
  }
  return text.length;
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
