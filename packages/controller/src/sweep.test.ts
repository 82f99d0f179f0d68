import { test } from "node:test";
import assert from "node:assert/strict";
import { Kind, RootSyncNamespace } from "@driftless/api";
import type { KubeClient } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { syncOwnedLabels } from "./labels.ts";
import { sweepOrphans } from "./sweep.ts";

const rootSync: SyncRef = { kind: Kind.RootSync, namespace: RootSyncNamespace, name: "root-sync" };

/** The ServiceAccount of `rootSync`'s reconciler, and a RootSync type the API server does not serve (404: undefined). */
const client = {
  list: () =>
    Promise.resolve({
      items: [
        {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: "root-reconciler", labels: syncOwnedLabels(rootSync) },
        },
      ],
    }),
  get: () => Promise.resolve(undefined),
} as unknown as KubeClient;

test("a reconciler whose sync kind was never listed (its CRD answered 404) is no orphan; once listed, a missing sync's is", async () => {
  const listed = (unlisted: boolean) => ({ syncRefs: (): SyncRef[] => [], unlisted: () => unlisted });
  assert.deepEqual(await sweepOrphans(client, listed(true)), [], "an empty cache that never listed says nothing");
  assert.deepEqual(await sweepOrphans(client, listed(false)), [rootSync]);
});
