import { test } from "node:test";
import assert from "node:assert/strict";
import { repoSyncCrd, rootSyncCrd } from "@driftless/api";
import { maxSourceUrlLength, repoKey } from "./repo-url.ts";

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
  for (const form of forms) assert.equal(repoKey(form), "github.com/acme/config", form);
});

test("different repositories, ports and paths stay apart", () => {
  assert.notEqual(repoKey("https://github.com/acme/config"), repoKey("https://github.com/acme/config-2"));
  assert.notEqual(repoKey("https://git.example.com:8443/a/b"), repoKey("https://git.example.com/a/b"));
  assert.notEqual(
    repoKey("https://git.example.com/Acme/config"),
    repoKey("https://git.example.com/acme/config"),
    "paths are case-sensitive",
  );
});

test("on github.com and gitlab.com, owner and repository names match in any case; elsewhere case counts", () => {
  assert.equal(
    repoKey("https://github.com/Octo-Org/Hello-World.git"),
    repoKey("https://github.com/octo-org/hello-world"),
  );
  assert.equal(repoKey("git@github.com:Octo-Org/Hello-World.git"), repoKey("https://github.com/octo-org/hello-world"));
  assert.equal(repoKey("https://gitlab.com/Group/Sub/Project"), repoKey("ssh://git@gitlab.com/group/sub/project.git"));
  assert.notEqual(repoKey("https://github.example.com/Org/Repo"), repoKey("https://github.example.com/org/repo"));
  assert.notEqual(repoKey("https://github.com:8443/Org/Repo"), repoKey("https://github.com:8443/org/repo"));
});

test("a URL over the CRDs' maxLength has no key, whatever it holds; one at the limit is keyed in one pass", () => {
  // A run of slashes not at the end made the old trailing-slash regex quadratic: 40,000 took seconds.
  const slashes = (n: number): string => `https://example.invalid/${"/".repeat(n)}x`;
  assert.equal(repoKey(`https://example.invalid/${"a".repeat(4096)}`), undefined);
  assert.equal(repoKey(slashes(40_000)), undefined);
  assert.equal(repoKey(slashes(1024 * 1024)), undefined);
  const atLimit = slashes(maxSourceUrlLength - "https://example.invalid/x".length);
  assert.equal(atLimit.length, maxSourceUrlLength);
  assert.equal(repoKey(atLimit), "example.invalid/x");
  assert.equal(repoKey(`git@example.invalid:x.git${"/".repeat(2000)}`), "example.invalid/x");
});

test("the key's length limit is the maxLength of every source URL in both CRDs", () => {
  for (const crd of [rootSyncCrd, repoSyncCrd]) {
    for (const version of crd.spec.versions) {
      const spec = version.schema?.openAPIV3Schema.properties?.["spec"]?.properties;
      for (const [source, field] of [
        ["git", "repo"],
        ["oci", "image"],
        ["helm", "repo"],
      ] as const) {
        const where = `${crd.spec.names.kind} ${version.name} spec.${source}.${field}`;
        assert.equal(spec?.[source]?.properties?.[field]?.maxLength, maxSourceUrlLength, where);
      }
    }
  }
});

test("file repositories key on their path", () => {
  assert.equal(repoKey("file:///tmp/repo/remote.git"), "file:/tmp/repo/remote");
  assert.equal(repoKey("file:///tmp/repo/remote.git/"), repoKey("file:///tmp/repo/remote"));
});

test("a URL with a bad %-escape has no key instead of throwing", () => {
  assert.equal(repoKey("https://github.com/acme/%zz"), undefined);
  assert.equal(repoKey("file:///tmp/%zz"), undefined);
});
