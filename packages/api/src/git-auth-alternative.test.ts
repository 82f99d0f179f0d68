import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRootSync } from "./parse-sync.ts";

const sync = (git: Record<string, unknown>): unknown => ({
  apiVersion: "configsync.gke.io/v1beta1",
  kind: "RootSync",
  metadata: { name: "root-sync", namespace: "config-management-system" },
  spec: { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", ...git } },
});

function messages(input: unknown): string {
  const result = parseRootSync(input);
  assert.equal(result.ok, false);
  return result.ok ? "" : result.errors.map((e) => e.message).join("\n");
}

void describe("Git auth types driftless refuses, and cookiefile, which it implements", () => {
  void it("names the alternative for the Google-only types", () => {
    for (const auth of ["gcenode", "gcpserviceaccount"]) {
      const message = messages(sync({ auth, gcpServiceAccountEmail: "syncer@project.iam.gserviceaccount.com" }));
      assert.match(message, new RegExp(`spec.git.auth "${auth}" is not supported by driftless`));
      assert.match(message, /Google Cloud's metadata server or Workload Identity.*use auth "token"/);
    }
  });

  void it("names the alternative for githubapp", () => {
    assert.match(messages(sync({ auth: "githubapp", secretRef: { name: "app" } })), /use auth "token".*deploy key/);
  });

  void it("accepts cookiefile with a secretRef, with or without a proxy, and requires the secretRef", () => {
    assert.equal(parseRootSync(sync({ auth: "cookiefile", secretRef: { name: "jar" } })).ok, true);
    assert.equal(
      parseRootSync(sync({ auth: "cookiefile", secretRef: { name: "jar" }, proxy: "http://p:3128" })).ok,
      true,
    );
    assert.match(
      messages(sync({ auth: "cookiefile" })),
      /RootSyncs which specify spec.git.auth as one of "ssh", "cookiefile", "githubapp", or "token" must also specify spec.git.secretRef \(auth is "cookiefile"\)/,
    );
  });
});
