import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KnvCode, nsReconcilerName } from "@driftless/api";
import { syncOwnedLabels } from "./labels.ts";
import { ReconcilerNameTakenError, reconcilerNameHolder } from "./reconciler-name.ts";

const victim = { kind: "RepoSync", namespace: "shop-db-2", name: "repo-sync" } as const;
const newcomer = { kind: "RepoSync", namespace: "shop", name: "db" } as const;

void describe("who holds a reconciler name", () => {
  void it("the two RepoSyncs of Config Sync's naming collide", () => {
    assert.equal(nsReconcilerName(victim.namespace, victim.name), nsReconcilerName(newcomer.namespace, newcomer.name));
  });

  void it("an object labelled for another sync is that sync's: the newcomer must not touch it", () => {
    assert.deepEqual(reconcilerNameHolder(newcomer, [syncOwnedLabels(victim)]), victim);
    assert.deepEqual(reconcilerNameHolder(victim, [syncOwnedLabels(newcomer)]), newcomer);
  });

  void it("its own objects, objects not there, and unlabelled or foreign ones hold nothing against it", () => {
    assert.equal(reconcilerNameHolder(victim, [syncOwnedLabels(victim)]), undefined);
    assert.equal(reconcilerNameHolder(victim, [undefined, undefined]), undefined);
    assert.equal(reconcilerNameHolder(victim, [{}]), undefined);
    // Labelled for a sync, but made by neither this manager nor Config Sync's (by hand): not a sync's claim.
    const foreign = { ...syncOwnedLabels(newcomer), "app.kubernetes.io/managed-by": "someone-else" };
    assert.equal(reconcilerNameHolder(victim, [foreign]), undefined);
  });

  void it("Config Sync's reconciler of another sync, left when taking over, holds the name against the newcomer", () => {
    // The labels Config Sync's reconciler-manager puts on a reconciler's Deployment and ServiceAccount.
    const configSyncMade = {
      app: "reconciler",
      "configsync.gke.io/managed-by": "reconciler-manager",
      "configsync.gke.io/sync-kind": victim.kind,
      "configsync.gke.io/sync-name": victim.name,
      "configsync.gke.io/sync-namespace": victim.namespace,
    };
    assert.deepEqual(reconcilerNameHolder(newcomer, [configSyncMade]), victim);
    // Its own sync takes it over.
    assert.equal(reconcilerNameHolder(victim, [configSyncMade]), undefined);
  });

  void it("the first object naming another sync decides, whichever of the objects it is", () => {
    assert.deepEqual(reconcilerNameHolder(newcomer, [undefined, syncOwnedLabels(victim)]), victim);
    assert.deepEqual(reconcilerNameHolder(newcomer, [syncOwnedLabels(newcomer), syncOwnedLabels(victim)]), victim);
  });

  void it("the refusal is KNV1061, naming the name and the sync holding it, and is not retried", () => {
    const error = new ReconcilerNameTakenError(newcomer, "ns-reconciler-shop-db-2", victim);
    assert.equal(error.code, KnvCode.InvalidSync);
    assert.equal(error.errorClass, "terminal");
    assert.equal(
      error.message,
      "reconciler name ns-reconciler-shop-db-2 is already used by RepoSync shop-db-2/repo-sync",
    );
  });
});
