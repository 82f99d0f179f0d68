/**
 * The console's guard: it serves on loopback with the user's own credentials, so anything that can
 * reach the port must also prove it holds the per-run secret the console printed. The secret is the
 * first segment of every path (`/s/<secret>/...`), never a cookie: a browser sends a cookie of
 * 127.0.0.1 to every port there, so another local user's server would collect it. Writes also need a
 * CSRF token (derived from the secret) and a same-origin request; the Host must be loopback (DNS rebinding).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Constant time whatever the lengths: digests of equal length are compared, never the strings. */
export function sameSecret(given: string | undefined, secret: string): boolean {
  if (given === undefined) return false;
  const digest = (s: string): Buffer => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(secret));
}

/** The anti-CSRF token the pages carry: bound to the secret. */
export function csrfToken(secret: string): string {
  return createHmac("sha256", secret).update("driftless-console-csrf").digest("base64url");
}

/** Where the secret sits in every path: pages link relative to it (their <base>). */
export function secretPrefix(secret: string): string {
  return `/s/${secret}/`;
}

/**
 * `/s/<given>/rest` as the secret given and the console's own path (`/rest`); `path` is "" for
 * `/s/<given>` without its slash. Undefined for a path without a secret.
 */
export function splitSecretPath(pathname: string): { readonly given: string; readonly path: string } | undefined {
  const match = /^\/s\/([^/]+)(\/.*)?$/.exec(pathname);
  if (match?.[1] === undefined) return undefined;
  return { given: match[1], path: match[2] ?? "" };
}

/** Only the loopback names, with our port: a rebinding DNS name pointing at 127.0.0.1 is refused. */
export function hostAllowed(host: string | undefined, port: number): boolean {
  return host !== undefined && [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host.toLowerCase());
}

/**
 * A write must come from our own pages: Fetch Metadata says same-origin, or, from a browser that sends
 * none, Origin is this Host. A request with neither is refused: browsers send one of them on a POST, and
 * another site's page cannot forge either.
 */
export function sameOrigin(headers: {
  readonly origin?: string | undefined;
  readonly host?: string | undefined;
  readonly "sec-fetch-site"?: string | string[] | undefined;
}): boolean {
  const site = headers["sec-fetch-site"];
  if (site !== undefined) return site === "same-origin";
  return headers.origin !== undefined && headers.origin === `http://${headers.host ?? ""}`;
}

/** On every answer: nothing framed, no inline script, nothing cached, no referrer carrying the secret's URL. */
export const securityHeaders: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'self'; object-src 'none'",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};
