import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import { applySetId, applySetParentPatch, ApplySetToolingConflictError } from "./applyset.ts";

const sync = { kind: "RepoSync", namespace: "team", name: "repo-sync" } as const;
const rsync = (labels: Record<string, string>, annotations: Record<string, string>): KubeObject => ({
  apiVersion: "configsync.gke.io/v1beta1",
  kind: "RepoSync",
  metadata: { name: "repo-sync", namespace: "team", labels, annotations },
});

test("the ApplySet id is KEP-3659's v1 id of the parent RSync (checked against Go's sha256 and base64.RawURLEncoding)", () => {
  assert.equal(applySetId(sync), "applyset-Z6mdqUhFpfqJASkDGrs62ek6kbvd5uQfnSr99ds5Mns-v1");
  assert.notEqual(applySetId({ ...sync, kind: "RootSync" }), applySetId(sync));
});

test("the RSync is labelled and annotated as the set's parent once; a parent already ours needs no patch", () => {
  assert.deepEqual(applySetParentPatch(sync, rsync({ keep: "x" }, {})), {
    metadata: {
      labels: { "applyset.kubernetes.io/id": applySetId(sync) },
      annotations: { "applyset.kubernetes.io/tooling": "configsync.gke.io/v1" },
    },
  });
  const parent = rsync(
    { "applyset.kubernetes.io/id": applySetId(sync) },
    { "applyset.kubernetes.io/tooling": "configsync.gke.io/v1" },
  );
  assert.equal(applySetParentPatch(sync, parent), undefined);
  // Another version of Config Sync's tooling is ours to update, as Config Sync does.
  assert.ok(applySetParentPatch(sync, rsync({}, { "applyset.kubernetes.io/tooling": "configsync.gke.io/v0" })));
});

test("a set another tool manages is left alone", () => {
  assert.throws(
    () => applySetParentPatch(sync, rsync({}, { "applyset.kubernetes.io/tooling": "kubectl/v1.30" })),
    ApplySetToolingConflictError,
  );
});
