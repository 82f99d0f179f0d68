/**
 * The console's guard: it serves on loopback with the user's own credentials, so anything that can
 * reach the port must also prove it holds the per-run secret the console printed. The secret travels
 * once in the URL, then lives in an HttpOnly, SameSite=Strict cookie; writes also need a CSRF token
 * (derived from the secret) and a same-origin Origin; the Host must be loopback (DNS rebinding).
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

/** The anti-CSRF token the pages carry: bound to the secret, useless without the cookie. */
export function csrfToken(secret: string): string {
  return createHmac("sha256", secret).update("driftless-console-csrf").digest("base64url");
}

/** Per port: two consoles on one machine do not overwrite each other's cookie (cookies ignore ports). */
export function cookieName(port: number): string {
  return `driftless-console-${port}`;
}

export function sessionCookie(port: number, secret: string): string {
  return `${cookieName(port)}=${secret}; HttpOnly; SameSite=Strict; Path=/`;
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** Only the loopback names, with our port: a rebinding DNS name pointing at 127.0.0.1 is refused. */
export function hostAllowed(host: string | undefined, port: number): boolean {
  return host !== undefined && [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host.toLowerCase());
}

/** A write must come from our own pages: Origin (when sent) is this Host, and Fetch Metadata agrees. */
export function sameOrigin(headers: {
  readonly origin?: string | undefined;
  readonly host?: string | undefined;
  readonly "sec-fetch-site"?: string | string[] | undefined;
}): boolean {
  const site = headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin") return false;
  return headers.origin === undefined || headers.origin === `http://${headers.host ?? ""}`;
}

/** On every answer: nothing framed, no inline script, nothing cached, no referrer carrying a URL. */
export const securityHeaders: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};
