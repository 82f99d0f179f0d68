import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import type { KubeObject } from "@driftless/kube";
import { syncReport, SyncState } from "../sync-report.ts";

// Scripts branch on `state`: the README's list is the contract, and must name every state printed.
test("the README lists every state `status -o json` prints, and no other", async () => {
  const readme = await readFile(join(import.meta.dirname, "..", "..", "..", "..", "README.md"), "utf8");
  const listed = /`state` \(([^)]*)\)/.exec(readme)?.[1];
  assert.ok(listed !== undefined, "README.md describes no `state` of `status -o json`");
  const states = [...listed.matchAll(/`([A-Z]+)`/g)].map((m) => m[1]);
  assert.deepEqual(states.sort(), Object.values(SyncState).sort());
});

// Fields are only ever added: the README's list is what scripts may rely on, so it names every one printed.
test("the README names every field of a sync `status -o json` prints", async () => {
  const readme = await readFile(join(import.meta.dirname, "..", "..", "..", "..", "README.md"), "utf8");
  const start = readme.indexOf("`status -o json` prints");
  const described = readme.slice(start, readme.indexOf("`-o yaml`", start));
  assert.ok(start !== -1 && described.length > 0, "README.md describes no fields of `status -o json`");
  const sync = (conditions: object[]): KubeObject =>
    ({
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: {
        name: "root-sync",
        namespace: "config-management-system",
        annotations: { "driftless.dev/suspend": String(conditions.some((c) => "type" in c && c.type === "Suspended")) },
      },
      spec: { git: { repo: "r", branch: "main" } },
      status: { conditions },
    }) as KubeObject;
  const group = { apiVersion: "kpt.dev/v1alpha1", kind: "ResourceGroup", metadata: { name: "root-sync" } };
  const stalled = syncReport(sync([{ type: "Stalled", status: "True", reason: "Validation", message: "bad" }]), group);
  const suspended = syncReport(
    sync([
      { type: "Syncing", status: "False", reason: "Suspended", message: "Suspended" },
      { type: "Suspended", status: "True", reason: "Suspended", message: "1 missing" },
    ]),
  );
  const fields = new Set([...Object.keys(stalled), ...Object.keys(suspended)]);
  const missing = [...fields].filter((f) => !described.includes(`\`${f}\``));
  assert.deepEqual(missing, []);
});
