import assert from "node:assert/strict";
import { test } from "node:test";
import { OciFetchError, OciFailureReason } from "./errors.ts";
import { tokenEndpoint } from "./registry-client.ts";

test("credentials go only to a token service over HTTPS", () => {
  assert.equal(tokenEndpoint("https://auth.example/token", true, "reg/app:1").href, "https://auth.example/token");
  assert.throws(
    () => tokenEndpoint("http://auth.example/token", true, "reg/app:1"),
    (error: unknown) =>
      error instanceof OciFetchError &&
      error.reason === OciFailureReason.AuthRejected &&
      /not HTTPS/.test(error.message),
  );
  // Anonymous pulls may follow an http:// realm: nothing secret is sent.
  assert.equal(tokenEndpoint("http://auth.example/token", false, "reg/app:1").protocol, "http:");
  assert.throws(() => tokenEndpoint("not a url", true, "reg/app:1"), OciFetchError);
});

test("credentials go over http only to a token service whose name allows plain HTTP, as the registry's does", () => {
  for (const realm of ["http://127.0.0.1:5001/token", "http://10.0.0.5/token", "http://auth.local:8080/token"])
    assert.equal(tokenEndpoint(realm, true, "reg/app:1").href, realm);
  // Looks local to a reader, but neither name is one the rule allows: the password would cross the network.
  for (const realm of ["http://localhost/token", "http://127.0.0.2:5001/token", "http://10.0.0.5.example/token"])
    assert.throws(
      () => tokenEndpoint(realm, true, "reg/app:1"),
      (error: unknown) => error instanceof OciFetchError && error.reason === OciFailureReason.AuthRejected,
      realm,
    );
});
