/**
 * Redis URLs may carry a password (`redis://:secret@host:6379`). Nothing driftless logs or throws
 * may contain it, so every URL is redacted before it is used in a message.
 */

const MASK = "***";

/** The URL with its password (and only its password) masked; a placeholder if it does not parse. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // An unparseable string could be anything, including a bare secret: never echo it.
    return "<unparseable redis url>";
  }
  if (parsed.password !== "") parsed.password = MASK;
  return parsed.toString();
}

/** The password in a Redis URL, if any, in the forms it could appear in a message. */
export function secretsOf(url: string): readonly string[] {
  try {
    const password = new URL(url).password;
    if (password === "") return [];
    const decoded = decodeURIComponent(password);
    return decoded === password ? [password] : [password, decoded];
  } catch {
    return [];
  }
}

/** `text` with every occurrence of every secret masked. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== "") out = out.split(secret).join(MASK);
  }
  return out;
}
