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

test("a declared kube-system's labels and annotations follow Git, and managed: disabled releases it with none of Config Sync's metadata and the detach kept; removing its file deletes nothing (Config Sync's TestSyncLabelsAndAnnotationsOnKubeSystem)", async (t) => {
  const name = `kube-system-${suffix()}`;
  const key = `special-${suffix()}`;
  const repo = await TestRepo.create(t);
  const kubeSystem = (labels: Record<string, string>, annotations: Record<string, string>): string =>
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "kube-system", labels, annotations } });
  await repo.write("config/ns.yaml", kubeSystem({ [key]: "fuzzy" }, { [key]: "green" }));
  // Something else stays declared, so removing the Namespace is not an empty source (KNV2006).
  await repo.write(
    "config/cm.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: key, namespace: "default" } }),
  );
  const first = await repo.commit("declare kube-system with a label and an annotation");
  await createRootSync(name, repo);
  // Quietly: kube-system is shared, so the replace can meet a conflict, which must not skip stopping the reconciler.
  t.after(() =>
    quietly("removing the test's label and annotation from kube-system", async () => {
      const ns = await coreApi().readNamespace({ name: "kube-system" });
      const labels = { ...ns.metadata?.labels };
      const annotations = { ...ns.metadata?.annotations };
      delete labels[key];
      delete annotations[key];
      await coreApi().replaceNamespace({
        name: "kube-system",
        body: { ...ns, metadata: { ...ns.metadata, labels, annotations } },
      });
    }),
  );
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  const applied = await coreApi().readNamespace({ name: "kube-system" });
  assert.equal(applied.metadata?.labels?.[key], "fuzzy");
  assert.equal(applied.metadata?.annotations?.[key], "green");

  await repo.write("config/ns.yaml", kubeSystem({}, {}));
  await rootSynced(name, await repo.commit("remove the label and the annotation"));
  const updated = await coreApi().readNamespace({ name: "kube-system" });
  assert.equal(updated.metadata?.labels?.[key], undefined);
  assert.equal(updated.metadata?.annotations?.[key], undefined);

  await repo.write("config/ns.yaml", kubeSystem({}, { [ManagedAnnotation.Managed]: "disabled" }));
  await rootSynced(name, await repo.commit("stop managing kube-system"));
  const released = await coreApi().readNamespace({ name: "kube-system" });
  const ours = (keys: Record<string, string> | undefined): string[] =>
    Object.keys(keys ?? {}).filter((k) =>
      /configsync\.gke\.io|configmanagement\.gke\.io|^applyset\.|owning-inventory/.test(k),
    );
  assert.deepEqual(ours(released.metadata?.labels), [], "Config Sync's labels left on a released kube-system");
  assert.deepEqual(
    ours(released.metadata?.annotations),
    [],
    "Config Sync's annotations left on a released kube-system",
  );
  assert.equal(released.metadata?.labels?.["app.kubernetes.io/managed-by"], undefined);
  assert.equal(released.metadata?.annotations?.[UserAnnotation.LifecycleDeletion], "detach");

  await repo.remove("config/ns.yaml");
  await rootSynced(name, await repo.commit("remove kube-system from Git"));
  const kept = await coreApi().readNamespace({ name: "kube-system" });
  assert.equal(kept.metadata?.deletionTimestamp, undefined, "kube-system is being deleted");
});
