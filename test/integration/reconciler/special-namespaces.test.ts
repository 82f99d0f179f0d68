/**
 * A special Namespace (kube-public here) declared in Git is applied marked to be detached, as Config
 * Sync does: removing it from Git releases it, and the cluster keeps it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ManagedAnnotation, UserAnnotation } from "@driftless/api";
import {
  coreApi,
  createRootSync,
  eventually,
  quietly,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  TestRepo,
} from "../../support/index.ts";

test("a declared kube-public is applied with the detach annotation, and removing it from Git releases it instead of deleting it", async (t) => {
  const name = `special-${suffix()}`;
  const label = `special-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/ns.yaml",
    JSON.stringify({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "kube-public", labels: { [label]: "yes" } },
    }),
  );
  // Something else stays declared, so removing the Namespace is not an empty source (KNV2006).
  await repo.write(
    "config/cm.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: label, namespace: "default" } }),
  );
  const first = await repo.commit("declare kube-public");
  await createRootSync(name, repo);
  // Quietly: kube-public is shared, so the replace can meet a conflict, which must not skip stopping the reconciler.
  t.after(() =>
    quietly("removing the test's label from kube-public", async () => {
      const ns = await coreApi().readNamespace({ name: "kube-public" });
      const labels = { ...ns.metadata?.labels };
      delete labels[label];
      await coreApi().replaceNamespace({ name: "kube-public", body: { ...ns, metadata: { ...ns.metadata, labels } } });
    }),
  );
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  const applied = await coreApi().readNamespace({ name: "kube-public" });
  assert.equal(applied.metadata?.labels?.[label], "yes");
  assert.equal(applied.metadata?.annotations?.[UserAnnotation.LifecycleDeletion], "detach");

  await repo.remove("config/ns.yaml");
  const second = await repo.commit("remove kube-public from Git");
  await rootSynced(name, second);
  const released = await eventually(
    async () => {
      const ns = await coreApi().readNamespace({ name: "kube-public" });
      return ns.metadata?.annotations?.[ManagedAnnotation.Manager] === undefined ? ns : undefined;
    },
    { what: "kube-public to be released" },
  );
  assert.equal(released.metadata?.deletionTimestamp, undefined, "kube-public is being deleted");
  assert.equal(released.status?.phase, "Active");
});
