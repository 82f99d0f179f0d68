/**
 * `client.lifecycle.config.k8s.io/mutation: ignore` as Config Sync's e2e tests state it
 * (ignore_mutation_test.go): the object's content is left as it is, but Config Sync's metadata on it
 * follows the declaration, the mutation annotation among them, so a declared ignore annotation reaches
 * the object, a changed or deleted management annotation is restored, and an ignore annotation that is
 * not declared (put there by hand) is removed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { V1ConfigMap } from "@kubernetes/client-node";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

const ignore = { "client.lifecycle.config.k8s.io/mutation": "ignore" };
const configMap = (namespace: string, name: string, annotations: Record<string, string>): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, annotations } });

async function annotations(namespace: string, name: string): Promise<Record<string, string>> {
  return (await coreApi().readNamespacedConfigMap({ namespace, name })).metadata?.annotations ?? {};
}

/** A change by hand: read, change the annotations, replace. */
async function annotate(namespace: string, name: string, change: (a: Record<string, string>) => void): Promise<void> {
  const live: V1ConfigMap = await coreApi().readNamespacedConfigMap({ namespace, name });
  const next = { ...live.metadata?.annotations };
  change(next);
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name,
    body: { ...live, metadata: { ...live.metadata, annotations: next } },
  });
}

function until(namespace: string, name: string, what: string, ok: (a: Record<string, string>) => boolean) {
  return eventually(async () => ok(await annotations(namespace, name)), { what: `${name}: ${what}` });
}

test("a mutation-ignored object keeps its content but Config Sync's metadata, the ignore annotation included, follows the declaration", async (t) => {
  const namespace = await testNamespace(t, "ignore");
  const name = `ignore-${suffix()}`;
  const repo = await TestRepo.create(t);
  // Unmanaged objects the source will declare: one plain, one carrying the ignore annotation.
  await coreApi().createNamespacedConfigMap({ namespace, body: { metadata: { name: "adopted" } } });
  await coreApi().createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: "hand-ignored", annotations: { ...ignore } } },
  });
  await repo.write("config/managed.yaml", configMap(namespace, "managed", { season: "summer" }));
  await repo.write("config/plain.yaml", configMap(namespace, "plain", { season: "summer" }));
  await repo.write("config/adopted.yaml", configMap(namespace, "adopted", { ...ignore, season: "summer" }));
  await repo.write("config/hand-ignored.yaml", configMap(namespace, "hand-ignored", { season: "summer" }));
  const first = await repo.commit("declare");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  // TestDeclareIgnoreMutationForUnmanagedObject: managed, the ignore annotation on it, its content left alone.
  const adopted = await annotations(namespace, "adopted");
  assert.equal(adopted["client.lifecycle.config.k8s.io/mutation"], "ignore");
  assert.equal(adopted["configmanagement.gke.io/managed"], "enabled");
  assert.equal(adopted["season"], undefined, "a mutation-ignored object's content was changed");
  // TestDeclareUnmanagedObjectWithoutIgnoreAnnotation: an ignore annotation nobody declares goes.
  const handIgnored = await annotations(namespace, "hand-ignored");
  assert.equal(handIgnored["season"], "summer");
  assert.equal(handIgnored["client.lifecycle.config.k8s.io/mutation"], undefined);

  // TestAddIgnoreMutationAndSpecChangesToManagedObject: the annotation arrives, the other change does not.
  await repo.write("config/managed.yaml", configMap(namespace, "managed", { ...ignore, season: "winter" }));
  const second = await repo.commit("ignore mutations of managed, and change it");
  await rootSynced(name, second);
  await until(namespace, "managed", "ignore annotation added, season kept", (a) => {
    return a["client.lifecycle.config.k8s.io/mutation"] === "ignore" && a["season"] === "summer";
  });

  // TestDriftKubectlAnnotateDeleteManagedFieldsWithIgnoreMutationAnnotation: a deleted declared field
  // stays deleted, a deleted management annotation comes back.
  await annotate(namespace, "managed", (a) => delete a["season"]);
  await annotate(namespace, "managed", (a) => delete a["configmanagement.gke.io/managed"]);
  await until(
    namespace,
    "managed",
    "managed annotation restored",
    (a) => a["configmanagement.gke.io/managed"] === "enabled",
  );
  assert.equal((await annotations(namespace, "managed"))["season"], undefined);
  // TestDriftKubectlAnnotateConfigSyncAnnotation: a changed one is corrected.
  await annotate(namespace, "managed", (a) => (a["configmanagement.gke.io/managed"] = "fall"));
  await until(
    namespace,
    "managed",
    "managed annotation corrected",
    (a) => a["configmanagement.gke.io/managed"] === "enabled",
  );

  // TestAddIgnoreMutationAnnotationDirectly: added by hand to an object that does not declare it, it is removed.
  await annotate(namespace, "plain", (a) => Object.assign(a, ignore));
  await until(namespace, "plain", "hand-added ignore annotation removed", (a) => {
    return a["client.lifecycle.config.k8s.io/mutation"] === undefined;
  });

  // Back without the annotation: the declaration applies again, and the annotation goes.
  await repo.write("config/managed.yaml", configMap(namespace, "managed", { season: "fall" }));
  const third = await repo.commit("stop ignoring mutations of managed");
  await rootSynced(name, third);
  await until(namespace, "managed", "season fall, no ignore annotation", (a) => {
    return a["season"] === "fall" && a["client.lifecycle.config.k8s.io/mutation"] === undefined;
  });
});
