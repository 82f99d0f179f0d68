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
