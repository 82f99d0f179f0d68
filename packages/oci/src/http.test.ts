import assert from "node:assert/strict";
import { test } from "node:test";
import { redirectHeaders } from "./http.ts";

const headers = { accept: "application/json", authorization: "Basic dXNlcjpwYXNz" };

test("a redirect keeps the Authorization header only within the registry's origin", () => {
  const from = "https://registry.example/v2/app/blobs/sha256:1";
  assert.deepEqual(redirectHeaders(headers, from, new URL("https://registry.example/v2/other")), headers);
  assert.deepEqual(redirectHeaders(headers, from, new URL("https://storage.example/blob")), {
    accept: "application/json",
  });
  // Same host name, but in clear text: the credentials must not follow.
  assert.deepEqual(redirectHeaders(headers, from, new URL("http://registry.example/blob")), {
    accept: "application/json",
  });
  assert.deepEqual(redirectHeaders(headers, from, new URL("https://registry.example:5000/blob")), {
    accept: "application/json",
  });
});
