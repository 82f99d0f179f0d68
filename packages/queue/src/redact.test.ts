import { test } from "node:test";
import assert from "node:assert/strict";
import { redactSecrets, redactUrl, secretsOf } from "./redact.ts";

test("masks the password of a Redis URL and keeps everything else", () => {
  assert.equal(redactUrl("redis://:hunter2@redis.example:6380/2"), "redis://:***@redis.example:6380/2");
  assert.equal(redactUrl("rediss://default:hunter2@redis.example:6380"), "rediss://default:***@redis.example:6380");
  assert.equal(redactUrl("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
});

test("never echoes a string that is not a URL: it could be a bare secret", () => {
  assert.equal(redactUrl("hunter2"), "<unparseable redis url>");
});

test("masks a password wherever it appears, raw or URL-decoded", () => {
  const url = "redis://:p%40ss@host:6379";
  assert.deepEqual(secretsOf(url), ["p%40ss", "p@ss"]);
  assert.equal(redactSecrets("AUTH p@ss failed; url had p%40ss", secretsOf(url)), "AUTH *** failed; url had ***");
  assert.deepEqual(secretsOf("redis://host:6379"), []);
});
