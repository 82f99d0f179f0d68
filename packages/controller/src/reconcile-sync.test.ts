import { test } from "node:test";
import assert from "node:assert/strict";
import { Kind, RootSyncNamespace } from "@driftless/api";
import type { KubeClient } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { createLogger } from "@driftless/sync";
import { reconcileSync, type SyncContext } from "./reconcile-sync.ts";
import type { ReconcilerWorkload } from "./workload.ts";

const rootSync: SyncRef = { kind: Kind.RootSync, namespace: RootSyncNamespace, name: "root-sync" };

/** A context whose API server answers 404 for the sync (not found, or its type not served); records teardowns. */
function notFound(kindUnlisted: boolean): { ctx: SyncContext; tornDown: SyncRef[] } {
  const tornDown: SyncRef[] = [];
  const workload = {
    teardown: (ref: SyncRef) => {
      tornDown.push(ref);
      return Promise.resolve(undefined);
    },
  } as unknown as ReconcilerWorkload;
  const ctx: SyncContext = {
    client: { get: () => Promise.resolve(undefined) } as unknown as KubeClient,
    workload,
    log: createLogger({}, { write: () => undefined }),
    validation: { allowFileRepos: false, allowRepoSyncShellInRendering: false },
    inScope: () => true,
    kindUnlisted: () => kindUnlisted,
    onFinalizerRemoved: () => undefined,
    requestPass: () => Promise.resolve(),
    onTornDown: () => Promise.resolve(),
  };
  return { ctx, tornDown };
}

test("a sync not found is torn down, unless its kind was never listed (a 404 of its type says nothing of the sync)", async () => {
  const unlisted = notFound(true);
  await reconcileSync(unlisted.ctx, rootSync);
  assert.deepEqual(unlisted.tornDown, []);

  const listed = notFound(false);
  await reconcileSync(listed.ctx, rootSync);
  assert.deepEqual(listed.tornDown, [rootSync]);
});
