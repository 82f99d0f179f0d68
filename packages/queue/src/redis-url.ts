/**
 * A Redis URL and its password, which arrive separately: the URL (not secret) from a flag or
 * REDIS_URL, the password from a Secret (REDIS_PASSWORD through `secretKeyRef`). Flags show in `ps`
 * and a Deployment's plain env shows to whoever can read the Deployment, so neither may carry it.
 */

/** `url` with `password` in it (replacing any it had), percent-encoded so any character survives. */
export function withRedisPassword(url: string, password: string): string {
  const parsed = new URL(url);
  // The setter leaves `%` alone, so the password is encoded first; ioredis decodes it.
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/** `url` as the ACL user `username` with `password` (replacing any credentials it had), percent-encoded. */
export function withRedisCredentials(url: string, username: string, password: string): string {
  const parsed = new URL(withRedisPassword(url, password));
  parsed.username = encodeURIComponent(username);
  return parsed.toString();
}

/** `url` with neither user name nor password: what a reconciler gets besides its own credential. */
export function withoutRedisCredentials(url: string): string {
  const parsed = new URL(url);
  parsed.username = "";
  parsed.password = "";
  return parsed.toString();
}

/** The password in `url`, decoded; "" when it has none. */
export function redisPasswordOf(url: string): string {
  return decodeURIComponent(new URL(url).password);
}

/** `url` without its password (a username, for a Redis ACL user, stays). */
export function withoutRedisPassword(url: string): string {
  const parsed = new URL(url);
  parsed.password = "";
  return parsed.toString();
}

/** Whether `url` is a `redis://` or `rediss://` (TLS) URL. */
export function isRedisUrl(url: string): boolean {
  try {
    const { protocol, hostname } = new URL(url);
    return (protocol === "redis:" || protocol === "rediss:") && hostname !== "";
  } catch {
    return false;
  }
}

/** Whether `url` carries a password (false for what is not a URL: check isRedisUrl first). */
export function hasRedisPassword(url: string): boolean {
  try {
    return new URL(url).password !== "";
  } catch {
    return false;
  }
}
