/**
 * The token service a distribution registry configured with `auth: token` sends clients to: it checks
 * basic credentials and answers with a JWT the registry verifies against its rootcertbundle (signed
 * with the key of a certificate in that bundle, named in the token's x5c header).
 */
import { randomUUID, sign } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer } from "node:https";
import type { TestContext } from "node:test";

export interface TokenService {
  /** The realm the registry's challenges name. */
  readonly realm: string;
  readonly service: string;
  readonly issuer: string;
  /** Token requests answered (with valid credentials). */
  readonly issued: () => number;
}

const base64url = (data: Buffer | string): string => Buffer.from(data).toString("base64url");

/** `repository:config/app:pull,push` → the JWT's access claim. */
function accessOf(scope: string | null): { type: string; name: string; actions: string[] }[] {
  if (scope === null) return [];
  return scope.split(" ").flatMap((s) => {
    const [type, ...rest] = s.split(":");
    const actions = rest.pop();
    if (type === undefined || actions === undefined) return [];
    return [{ type, name: rest.join(":"), actions: actions.split(",") }];
  });
}

export async function startTokenService(
  t: TestContext,
  tls: { readonly cert: string; readonly key: string },
  credentials: { readonly username: string; readonly password: string },
): Promise<TokenService> {
  const certPem = await readFile(tls.cert, "utf8");
  const keyPem = await readFile(tls.key, "utf8");
  const der = certPem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const service = "driftless-test-registry";
  const issuer = "driftless-test-issuer";
  const expected = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
  let issued = 0;
  const server = createServer({ cert: certPem, key: keyPem }, (request, response) => {
    if (request.headers.authorization !== expected) {
      response.writeHead(401, { "content-type": "application/json" }).end('{"details":"wrong credentials"}');
      return;
    }
    const url = new URL(request.url ?? "/", "https://x");
    const now = Math.floor(Date.now() / 1000);
    const header = base64url(JSON.stringify({ typ: "JWT", alg: "RS256", x5c: [der] }));
    const claims = base64url(
      JSON.stringify({
        iss: issuer,
        sub: credentials.username,
        aud: url.searchParams.get("service") ?? service,
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomUUID(),
        access: accessOf(url.searchParams.get("scope")),
      }),
    );
    const signature = base64url(sign("sha256", Buffer.from(`${header}.${claims}`), keyPem));
    issued++;
    const token = `${header}.${claims}.${signature}`;
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ token, expires_in: 300 }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { realm: `https://127.0.0.1:${address.port}/token`, service, issuer, issued: () => issued };
}
