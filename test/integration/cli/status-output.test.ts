import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { findRepoRoot } from "@driftless/local-cluster";
import { customApi, testEnv, testNamespace, type JsonObject } from "../../support/index.ts";

const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");
// A C0 control other than newline, DEL, or C1: what a terminal would act on.
const controls = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

async function status(namespace: string, format: string): Promise<string> {
  const args = [cli, "status", "-n", namespace, "-o", format, "--kubeconfig", testEnv().kubeconfig];
  // Exit 1: the sync is not SYNCED, which is what this status says.
  return promisify(execFile)(process.execPath, args).then(
    (r) => r.stdout,
    (error: { code?: number; stdout?: string; stderr?: string }) => {
      assert.equal(error.code, 1, error.stderr);
      return error.stdout ?? "";
    },
  );
}

test("driftless status prints a sync's error message holding terminal escape sequences escaped, in text, JSON and YAML", async (t) => {
  const namespace = await testNamespace(t, "status-escape");
  const ref = { group: "configsync.gke.io", version: "v1beta1", namespace, plural: "reposyncs", name: "repo-sync" };
  const created = (await customApi().createNamespacedCustomObject({
    ...ref,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace },
      spec: { sourceFormat: "unstructured", git: { repo: "https://git.example/x.git", branch: "main", auth: "none" } },
    },
  })) as JsonObject;
  // What a tenant's repository can put in an error message: a file name retitling and clearing the terminal.
  const hostile = "KNV1006: \x1b]0;pwned\x07\x1b[2J\r\u009b2Jcm.yaml: bad yaml";
  await customApi().replaceNamespacedCustomObjectStatus({
    ...ref,
    body: {
      ...created,
      status: {
        source: { errors: [{ code: "1006", errorMessage: hostile }], errorSummary: { totalCount: 1 } },
        conditions: [
          {
            type: "Syncing",
            status: "False",
            reason: "Source",
            message: hostile,
            errorSourceRefs: ["status.source.errors"],
            errorSummary: { totalCount: 1 },
          },
        ],
      },
    },
  });

  const text = await status(namespace, "text");
  assert.ok(text.includes("\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\x9b2Jcm.yaml"), text);
  for (const format of ["text", "json", "yaml"]) {
    const out = format === "text" ? text : await status(namespace, format);
    assert.ok(out.includes("pwned"), `${format}: the message is shown: ${out}`);
    assert.doesNotMatch(out.replaceAll("\n", ""), controls, `${format}: ${JSON.stringify(out)}`);
  }
});

test("driftless status says no sync was found where there is none, as nomos status does, instead of a bare header", async (t) => {
  const namespace = await testNamespace(t, "status-empty");
  const args = [cli, "status", "-n", namespace, "--kubeconfig", testEnv().kubeconfig];
  const text = await promisify(execFile)(process.execPath, args);
  assert.equal(text.stdout, `No RootSync or RepoSync resources found in namespace "${namespace}"\n`);
  const named = await promisify(execFile)(process.execPath, [...args, "--name", "repo-sync"]);
  assert.equal(named.stdout, `No RootSync or RepoSync resources found named "repo-sync" in namespace "${namespace}"\n`);
  // Scripts read JSON: an empty list there, as before.
  const json = await promisify(execFile)(process.execPath, [...args, "-o", "json"]);
  assert.deepEqual(JSON.parse(json.stdout), { syncs: [] });
});

test("driftless status shows a RepoSync annotated driftless.dev/suspend as SUSPENDED though no reconciler has reported it", async (t) => {
  const namespace = await testNamespace(t, "status-suspended");
  const ref = { group: "configsync.gke.io", version: "v1beta1", namespace, plural: "reposyncs", name: "repo-sync" };
  const created = (await customApi().createNamespacedCustomObject({
    ...ref,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace, annotations: { "driftless.dev/suspend": "true" } },
      spec: { sourceFormat: "unstructured", git: { repo: "https://git.example/x.git", branch: "main", auth: "none" } },
    },
  })) as JsonObject;
  // The last status a reconciler wrote before the sync was suspended (no manager runs in this test).
  const commit = "0123456789abcdef0123456789abcdef01234567";
  await customApi().replaceNamespacedCustomObjectStatus({
    ...ref,
    body: {
      ...created,
      status: {
        lastSyncedCommit: commit,
        conditions: [{ type: "Syncing", status: "False", reason: "Sync", message: "Sync Completed", commit }],
      },
    },
  });
  assert.match(await status(namespace, "text"), new RegExp(`RepoSync +${namespace}/repo-sync +SUSPENDED `));
  const json = JSON.parse(await status(namespace, "json")) as { syncs: { state: string }[] };
  assert.deepEqual(
    json.syncs.map((s) => s.state),
    ["SUSPENDED"],
  );
});
