import { test } from "node:test";
import assert from "node:assert/strict";
import {
  csrfToken,
  hostAllowed,
  newSecret,
  sameOrigin,
  sameSecret,
  secretPrefix,
  splitSecretPath,
} from "./security.ts";

test("the secret is compared whole: a prefix, another length or nothing is refused", () => {
  const secret = newSecret();
  assert.equal(sameSecret(secret, secret), true);
  assert.equal(sameSecret(secret.slice(0, -1), secret), false);
  assert.equal(sameSecret(`${secret}x`, secret), false);
  assert.equal(sameSecret(undefined, secret), false);
  assert.equal(sameSecret("", secret), false);
  assert.notEqual(newSecret(), secret);
  assert.notEqual(csrfToken(secret), secret);
});

test("only loopback names with the console's own port are accepted as Host (DNS rebinding)", () => {
  assert.equal(hostAllowed("127.0.0.1:8080", 8080), true);
  assert.equal(hostAllowed("localhost:8080", 8080), true);
  assert.equal(hostAllowed("[::1]:8080", 8080), true);
  assert.equal(hostAllowed("evil.example:8080", 8080), false);
  assert.equal(hostAllowed("127.0.0.1:8081", 8080), false);
  assert.equal(hostAllowed(undefined, 8080), false);
});

test("writes from another origin or site are refused", () => {
  assert.equal(
    sameOrigin({ host: "127.0.0.1:1", origin: "http://127.0.0.1:1", "sec-fetch-site": "same-origin" }),
    true,
  );
  assert.equal(sameOrigin({ host: "127.0.0.1:1", origin: "http://evil.example" }), false);
  assert.equal(sameOrigin({ host: "127.0.0.1:1", origin: "http://127.0.0.1:2" }), false);
  assert.equal(sameOrigin({ host: "127.0.0.1:1", "sec-fetch-site": "cross-site" }), false);
  assert.equal(sameOrigin({ host: "127.0.0.1:1", "sec-fetch-site": "same-site" }), false);
});

test("a write that says neither where it comes from nor its site is refused; Fetch Metadata or Origin alone suffices", () => {
  assert.equal(sameOrigin({ host: "127.0.0.1:1" }), false);
  assert.equal(sameOrigin({ host: "127.0.0.1:1", origin: "null" }), false);
  assert.equal(sameOrigin({ host: "127.0.0.1:1", "sec-fetch-site": "same-origin" }), true);
  assert.equal(sameOrigin({ host: "127.0.0.1:1", origin: "http://127.0.0.1:1" }), true);
});

test("the secret is the first segment of every path; the console's own path follows it", () => {
  const secret = newSecret();
  assert.equal(secretPrefix(secret), `/s/${secret}/`);
  assert.deepEqual(splitSecretPath(`/s/${secret}/`), { given: secret, path: "/" });
  assert.deepEqual(splitSecretPath(`/s/${secret}/syncs/rootsync/a/b`), { given: secret, path: "/syncs/rootsync/a/b" });
  assert.deepEqual(splitSecretPath(`/s/${secret}`), { given: secret, path: "" });
  assert.equal(splitSecretPath("/"), undefined);
  assert.equal(splitSecretPath("/s/"), undefined);
  assert.equal(splitSecretPath(`/syncs/rootsync/a/b`), undefined);
});
