import { test } from "node:test";
import assert from "node:assert/strict";
import { repoKey } from "./repo-url.ts";

test("every URL form of one repository has the same key", () => {
  const forms = [
    "https://github.com/Acme/Config.git",
    "https://GitHub.com/Acme/Config",
    "https://github.com:443/Acme/Config/",
    "https://token@github.com/Acme/Config.git",
    "git@github.com:Acme/Config.git",
    "ssh://git@github.com/Acme/Config.git",
    "ssh://git@github.com:22/Acme/Config",
    "git://github.com/Acme/Config.git",
  ];
  for (const form of forms) assert.equal(repoKey(form), "github.com/Acme/Config", form);
});

test("different repositories, ports and paths stay apart", () => {
  assert.notEqual(repoKey("https://github.com/acme/config"), repoKey("https://github.com/acme/config-2"));
  assert.notEqual(repoKey("https://git.example.com:8443/a/b"), repoKey("https://git.example.com/a/b"));
  assert.notEqual(
    repoKey("https://github.com/Acme/config"),
    repoKey("https://github.com/acme/config"),
    "paths are case-sensitive",
  );
});

test("file repositories key on their path", () => {
  assert.equal(repoKey("file:///tmp/repo/remote.git"), "file:/tmp/repo/remote");
  assert.equal(repoKey("file:///tmp/repo/remote.git/"), repoKey("file:///tmp/repo/remote"));
});

test("a URL with a bad %-escape has no key instead of throwing", () => {
  assert.equal(repoKey("https://github.com/acme/%zz"), undefined);
  assert.equal(repoKey("file:///tmp/%zz"), undefined);
});
