import assert from "node:assert/strict";
import { test } from "node:test";
import { OciFetchError, OciFailureReason } from "./errors.ts";
import { tokenEndpoint } from "./registry-client.ts";

test("credentials go only to a token service over HTTPS", () => {
  assert.equal(
    tokenEndpoint("https://auth.example/token", true, "reg/app:1", "reg").href,
    "https://auth.example/token",
  );
  assert.throws(
    () => tokenEndpoint("http://auth.example/token", true, "reg/app:1", "reg"),
    (error: unknown) =>
      error instanceof OciFetchError &&
      error.reason === OciFailureReason.AuthRejected &&
      /not HTTPS/.test(error.message),
  );
  // Anonymous pulls may follow an http:// realm: nothing secret is sent.
  assert.equal(tokenEndpoint("http://auth.example/token", false, "reg/app:1", "reg").protocol, "http:");
  assert.throws(() => tokenEndpoint("not a url", true, "reg/app:1", "reg"), OciFetchError);
});

test("credentials go over http only to the token service on a plain-HTTP registry's own host", () => {
  const cases: [registry: string, realm: string][] = [
    ["127.0.0.1:5000", "http://127.0.0.1:5001/token"],
    ["10.0.0.5", "http://10.0.0.5/token"],
    ["auth.local:8080", "http://auth.local:8080/token"],
  ];
  for (const [registry, realm] of cases) assert.equal(tokenEndpoint(realm, true, "reg/app:1", registry).href, realm);
  // Looks local to a reader, is another host, or the registry itself is HTTPS-only: the password would cross the network.
  const refused: [registry: string, realm: string][] = [
    ["127.0.0.1:5000", "http://localhost/token"],
    ["127.0.0.1:5000", "http://127.0.0.2:5001/token"],
    ["10.0.0.5", "http://10.0.0.5.example/token"],
    ["gcr.io", "http://127.0.0.1.evil.example/token"],
    ["127.0.0.1:5000", "http://127.0.0.1.evil.example/token"],
    ["gcr.io", "http://127.0.0.1:5001/token"],
  ];
  for (const [registry, realm] of refused)
    assert.throws(
      () => tokenEndpoint(realm, true, "reg/app:1", registry),
      (error: unknown) => error instanceof OciFetchError && error.reason === OciFailureReason.AuthRejected,
      `${registry} → ${realm}`,
    );
});
