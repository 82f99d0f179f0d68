import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSync, type RSync } from "@driftless/api";
import { secretNamesReadBy } from "./secret-watch.ts";

function repoSync(spec: Record<string, unknown>): RSync {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace: "team-a" },
    spec,
  });
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.value;
}

test("the Secrets watched are those the source's pass reads: secretRef for its auth, and caCertSecretRef", () => {
  const git = { repo: "https://example.com/r.git", auth: "token", secretRef: { name: "creds" } };
  assert.deepEqual(secretNamesReadBy(repoSync({ git: { ...git, caCertSecretRef: { name: "ca" } } })), ["creds", "ca"]);
  assert.deepEqual(secretNamesReadBy(repoSync({ git: { repo: "https://example.com/r.git", auth: "none" } })), []);
  // Another source type's Secrets are not read, so not watched.
  const oci = { image: "registry.example.com/app:v1", auth: "none", caCertSecretRef: { name: "oci-ca" } };
  assert.deepEqual(secretNamesReadBy(repoSync({ sourceType: "oci", oci, git })), ["oci-ca"]);
  const helm = { repo: "https://charts.example.com", chart: "web", auth: "token", secretRef: { name: "helm-creds" } };
  assert.deepEqual(secretNamesReadBy(repoSync({ sourceType: "helm", helm })), ["helm-creds"]);
  assert.deepEqual(secretNamesReadBy(undefined), []);
});
