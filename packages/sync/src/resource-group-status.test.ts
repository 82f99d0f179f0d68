import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import {
  ManagementConflictError,
  PruneError,
  type ApplyOutcome,
  type Inventory,
  type ObjectId,
  type ResourceStatusEntry,
} from "@driftless/applier";
import {
  configMapMapping,
  KubeApiError,
  type KubeObject,
  type ResourceMapping,
  type RestMapper,
} from "@driftless/kube";
import type { InformerListener, InformerLiveState, UndeclaredListener } from "./live-cache.ts";
import { createLogger } from "./log.ts";
import { ResourceGroupStatus } from "./resource-group-status.ts";

const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;

function outcome(name: string): ApplyOutcome {
  const id = { group: "", kind: "ConfigMap", namespace: "ns", name };
  return {
    desired: {
      id,
      apiVersion: "v1",
      object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns" } },
      sourcePath: `${name}.yaml`,
      sourceHash: "h",
      dependsOn: [],
    },
    operation: "unchanged",
    health: "Current",
    mapping: configMapMapping,
  };
}

/** A live object whose kstatus is Failed (a Stalled condition), or Current. */
function live(name: string, failed: boolean, resourceVersion: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: "ns",
      resourceVersion,
      annotations: { "config.k8s.io/owning-inventory": "config-management-system_root-sync" },
    },
    ...(failed ? { status: { conditions: [{ type: "Stalled", status: "True", reason: "Broken" }] } } : {}),
  } as KubeObject;
}

/** A Config Connector kind (its group ends in cnrm.cloud.google.com). */
const kccMapping: ResourceMapping = {
  group: "sql.cnrm.cloud.google.com",
  version: "v1beta1",
  kind: "SQLInstance",
  resource: "sqlinstances",
  namespaced: true,
  verbs: [],
};

interface HarnessOptions {
  /** The ResourceGroup as stored when the reconciler starts. */
  readonly stored?: KubeObject;
  /** The overflow group `<sync>.pending` a crash during a large rename left, if any. */
  readonly pending?: KubeObject;
  /** Live objects by `name`, for the cache (get) and the server (refresh). */
  readonly objects?: Map<string, KubeObject>;
}

function harness(options: HarnessOptions = {}) {
  let listener: InformerListener | undefined;
  let undeclaredListener: UndeclaredListener | undefined;
  const writes: ResourceStatusEntry[][] = [];
  const prepared: ResourceMapping[] = [];
  /** What the restore told the caches to keep, and when (before or after it started any list). */
  const kept: { readonly ids: ObjectId[]; readonly afterPrepare: boolean }[] = [];
  /** The inventory each pass left, as handed to the caches' unwatchUnused. */
  const inventories: ObjectId[][] = [];
  const objects = options.objects ?? new Map<string, KubeObject>();
  const inventory = {
    writeStatus: (statuses: readonly ResourceStatusEntry[]) => {
      writes.push([...statuses]);
      return Promise.resolve();
    },
    sizeBytes: 0,
  } as unknown as Inventory;
  const read = (_mapping: ResourceMapping, _namespace: string | undefined, name: string) =>
    Promise.resolve(objects.get(name));
  const liveState = {
    onEvent: (l: InformerListener) => {
      listener = l;
      return () => undefined;
    },
    onUndeclared: (l: UndeclaredListener) => {
      undeclaredListener = l;
      return () => undefined;
    },
    get: read,
    refresh: read,
    prepare: (mappings: readonly ResourceMapping[]) => void prepared.push(...mappings),
    keepInventory: (ids: Iterable<ObjectId>) => void kept.push({ ids: [...ids], afterPrepare: prepared.length > 0 }),
    unwatchUnused: (ids: Iterable<ObjectId>) => void inventories.push([...ids]),
    watchedTypes: () => [configMapMapping, kccMapping],
    client: {
      get: (_mapping: ResourceMapping, _namespace: string, name: string) =>
        Promise.resolve(name === `${identity.name}.pending` ? options.pending : options.stored),
    },
  } as unknown as InformerLiveState;
  const mapper = {
    mappingForGroupKind: (group: string) => Promise.resolve(group === kccMapping.group ? kccMapping : configMapMapping),
  } as unknown as RestMapper;
  const state = { passing: false };
  const status = new ResourceGroupStatus({
    inventory,
    identity,
    live: liveState,
    mapper,
    log: createLogger({}, { level: "error", write: () => undefined }),
    passing: () => state.passing,
    debounceMs: 20,
    heldRecheckMs: 20,
  });
  const emit = (object: KubeObject, event: "add" | "update" | "delete" = "update"): void =>
    listener?.(event, configMapMapping, object);
  const emitUndeclared = (object: KubeObject): void => undeclaredListener?.(configMapMapping, object);
  const emitKcc = (object: KubeObject): void => listener?.("update", kccMapping, object);
  return { status, writes, emit, emitUndeclared, emitKcc, state, prepared, objects, kept, inventories };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await delay(10);
  assert.ok(condition(), "condition not met within 2 s");
}

void describe("ResourceGroupStatus", () => {
  it("gathers many status changes into one write, and writes nothing for events that change no status", async () => {
    const { status, writes, emit } = harness();
    await status.afterPass(
      Array.from({ length: 50 }, (_, i) => outcome(`cm-${i}`)),
      "abc",
    );
    assert.equal(writes.length, 1);
    for (let i = 0; i < 50; i++) emit(live(`cm-${i}`, true, "2"));
    await until(() => writes.length === 2);
    await delay(60);
    assert.equal(writes.length, 2, "one write for fifty changes");
    assert.ok(writes[1]?.every((s) => s.status === "Failed" && s.reconcile === "Failed"));
    assert.deepEqual(
      writes[1]?.[0]?.conditions?.map((c) => c.reason),
      ["Broken"],
    );
    for (let i = 0; i < 50; i++) emit(live(`cm-${i}`, true, "3")); // a new version, the same status
    emit(live("undeclared", true, "3"));
    await delay(60);
    assert.equal(writes.length, 2, "a write without a status change");
    status.stop();
  });

  it("holds changes while a pass runs and writes them once it is over", async () => {
    const { status, writes, emit, state } = harness();
    await status.afterPass([outcome("a")], "abc");
    state.passing = true;
    emit(live("a", true, "2"));
    await delay(60);
    assert.equal(writes.length, 1);
    state.passing = false;
    await until(() => writes.length === 2);
    assert.equal(writes[1]?.[0]?.status, "Failed");
    status.stop();
  });

  it("a change told while a pass runs is in the status that pass writes, not lost with the entries it replaces", async () => {
    const { status, writes, emit, state, objects } = harness();
    await status.afterPass([outcome("a")], "abc");
    state.passing = true;
    // Applied Current by the pass, then failed before the pass wrote its status: the only event of it.
    objects.set("a", live("a", true, "2"));
    emit(live("a", true, "2"));
    // New in this commit, and its first event came before the pass's status write too.
    objects.set("b", live("b", true, "3"));
    emit(live("b", true, "3"), "add");
    await status.afterPass([outcome("a"), outcome("b")], "def");
    state.passing = false;
    await delay(60);
    assert.deepEqual(
      writes.at(-1)?.map((s) => `${s.name}=${s.status}`),
      ["a=Failed", "b=Failed"],
    );
    status.stop();
  });

  it("schedules no retry for a write that fails after stop (the reconciler is shutting down)", async () => {
    let attempts = 0;
    let fail: ((error: Error) => void) | undefined;
    const inventory = {
      writeStatus: () => {
        attempts++;
        return new Promise<void>((_, reject) => (fail = reject));
      },
      sizeBytes: 0,
    } as unknown as Inventory;
    const status = new ResourceGroupStatus({
      inventory,
      identity,
      log: createLogger({}, { level: "error", write: () => undefined }),
      passing: () => false,
      retryMs: 10,
    });
    const pass = status.afterPass([outcome("a")], "abc");
    await until(() => fail !== undefined);
    status.stop();
    fail?.(new Error("the client is closed"));
    await pass;
    await delay(60);
    assert.equal(attempts, 1, "a stopped status writer retried");
  });

  it("a write refused with 403 (rights withdrawn while its sync is torn down) warns nothing and is not retried", async () => {
    let attempts = 0;
    const lines: string[] = [];
    const inventory = {
      writeStatus: () => {
        attempts++;
        return Promise.reject(
          new KubeApiError({
            status: 403,
            reason: "Forbidden",
            serverMessage: 'resourcegroups.kpt.dev "root-sync" is forbidden',
            operation: "update status of ResourceGroup.kpt.dev config-management-system/root-sync",
          }),
        );
      },
      sizeBytes: 0,
    } as unknown as Inventory;
    const status = new ResourceGroupStatus({
      inventory,
      identity,
      log: createLogger({}, { level: "info", write: (line) => lines.push(line) }),
      passing: () => false,
      retryMs: 10,
    });
    await status.afterPass([outcome("a")], "abc");
    await status.settled();
    await delay(60);
    status.stop();
    assert.equal(attempts, 1, "a refused write was retried");
    assert.deepEqual(lines, [], "a refused write was logged at info or above");
  });

  it("learns of a re-creation from the correction that wrote it (its echo is silent)", async () => {
    const { status, writes, emit } = harness();
    await status.afterPass([outcome("a")], "abc");
    emit(live("a", false, "2"));
    await delay(40);
    assert.equal(writes.length, 1, "an unchanged status is not written");
    status.observe({ ...outcome("a"), health: "NotFound" });
    await until(() => writes.length === 2);
    assert.equal(writes[1]?.[0]?.status, "NotFound");
    status.observe({ ...outcome("a"), operation: "created", health: "Current" });
    await until(() => writes.length === 3);
    assert.equal(writes[2]?.[0]?.status, "Current");
    status.stop();
  });

  it("tracks what a prune left in the inventory with strategy Delete: Terminating and Pending, then NotFound and Succeeded once gone", async () => {
    const { status, writes, objects, inventories } = harness();
    await status.afterPass([outcome("a"), outcome("b")], "abc");
    const terminating = {
      ...live("b", false, "3"),
      metadata: { ...live("b", false, "3").metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
    };
    objects.set("b", terminating);
    const failedId = { group: "", kind: "ConfigMap", namespace: "ns", name: "refused" };
    const heldId = { group: "", kind: "ConfigMap", namespace: "ns", name: "later" };
    await status.afterPass([outcome("a")], "def", new Set(), {
      pruned: [
        { id: { group: "", kind: "ConfigMap", namespace: "ns", name: "b" }, operation: "deleted" },
        { id: failedId, operation: "failed", error: new PruneError(failedId, new Error("refused")) },
      ],
      lingering: [{ group: "", kind: "ConfigMap", namespace: "ns", name: "b" }],
      held: [heldId],
    });
    assert.deepEqual(
      inventories.map((ids) => ids.map((id) => id.name).sort()),
      [
        ["a", "b"],
        ["a", "b", "later", "refused"],
      ],
      "the watch caches are told what each pass left in the inventory",
    );
    const byName = (n: number, name: string) => writes[n]?.find((e) => e.name === name);
    assert.deepEqual(
      [byName(1, "b")?.strategy, byName(1, "b")?.actuation, byName(1, "b")?.status, byName(1, "b")?.reconcile],
      ["Delete", "Succeeded", "Terminating", "Pending"],
    );
    assert.equal(
      byName(1, "b")?.sourceHash,
      byName(0, "b")?.sourceHash,
      "a pruned object keeps the commit it was applied from",
    );
    assert.deepEqual(
      [byName(1, "refused")?.strategy, byName(1, "refused")?.actuation, byName(1, "refused")?.reconcile],
      ["Delete", "Failed", "Skipped"],
    );
    assert.deepEqual(
      [byName(1, "later")?.strategy, byName(1, "later")?.actuation, byName(1, "later")?.reconcile],
      ["Delete", "Pending", "Pending"],
    );
    // Its finalizers removed, it is gone: no event comes for it (not cached), it is read again.
    objects.delete("b");
    await until(() => writes.length === 3);
    assert.deepEqual([byName(2, "b")?.status, byName(2, "b")?.reconcile], ["NotFound", "Succeeded"]);
    status.stop();
  });

  it("a pruned object's changes reach its entry through the events of objects no longer declared", async () => {
    const { status, writes, emitUndeclared } = harness();
    await status.afterPass([], "abc", new Set(), {
      pruned: [],
      lingering: [{ group: "", kind: "ConfigMap", namespace: "ns", name: "b" }],
      held: [],
    });
    emitUndeclared(live("b", false, "4")); // re-created, or its deletion undone: Current, the delete failed
    await until(() => writes.length === 2);
    assert.deepEqual([writes[1]?.[0]?.status, writes[1]?.[0]?.reconcile], ["Current", "Failed"]);
    status.stop();
  });

  it("a Config Connector resource not Current carries its own conditions, after a pass and on events", async () => {
    const kcc = (reason: string): KubeObject =>
      ({
        apiVersion: `${kccMapping.group}/v1beta1`,
        kind: "SQLInstance",
        metadata: { name: "db", namespace: "ns", generation: 1 },
        status: {
          observedGeneration: 1,
          conditions: [{ type: "Ready", status: "False", reason, message: `${reason}: quota exceeded` }],
        },
      }) as KubeObject;
    const objects = new Map([["db", kcc("UpdateFailed")]]);
    const { status, writes, emitKcc } = harness({ objects });
    const db: ApplyOutcome = {
      ...outcome("db"),
      desired: {
        ...outcome("db").desired,
        id: { group: kccMapping.group, kind: "SQLInstance", namespace: "ns", name: "db" },
      },
      health: "InProgress",
      mapping: kccMapping,
    };
    await status.afterPass([db], "abc");
    assert.deepEqual(writes[0]?.[0]?.conditions, [
      { type: "Ready", status: "False", reason: "UpdateFailed", message: "UpdateFailed: quota exceeded" },
    ]);
    emitKcc(kcc("DependencyNotReady"));
    await until(() => writes.length === 2);
    assert.equal(writes[1]?.[0]?.conditions?.[0]?.reason, "DependencyNotReady");
    status.stop();
  });

  it("a restarted reconciler follows the objects of the stored status before any pass applies", async () => {
    const stored = {
      apiVersion: "kpt.dev/v1alpha1",
      kind: "ResourceGroup",
      metadata: { name: "root-sync", namespace: "config-management-system" },
      spec: {
        resources: [
          { group: "", kind: "ConfigMap", namespace: "ns", name: "a" },
          { group: "", kind: "ConfigMap", namespace: "ns", name: "b" },
        ],
      },
      status: {
        resourceStatuses: [
          {
            group: "",
            kind: "ConfigMap",
            namespace: "ns",
            name: "a",
            status: "Current",
            sourceHash: "abc",
            strategy: "Apply",
            actuation: "Succeeded",
            reconcile: "Succeeded",
          },
          {
            group: "",
            kind: "ConfigMap",
            namespace: "ns",
            name: "b",
            status: "Current",
            sourceHash: "abc",
            strategy: "Apply",
            actuation: "Succeeded",
            reconcile: "Succeeded",
          },
        ],
      },
    } as unknown as KubeObject;
    const objects = new Map([
      ["a", live("a", false, "2")],
      ["b", live("b", false, "2")],
    ]);
    const { status, writes, emit, prepared, kept } = harness({ stored, objects });
    await status.settled();
    assert.deepEqual(
      kept,
      [
        {
          ids: [
            { group: "", kind: "ConfigMap", namespace: "ns", name: "a" },
            { group: "", kind: "ConfigMap", namespace: "ns", name: "b" },
          ],
          afterPrepare: false,
        },
      ],
      "the caches keep what the stored inventory records, from before their first list",
    );
    assert.equal(writes.length, 0, "the stored status read back is not written again");
    assert.deepEqual(
      prepared.map((m) => m.resource),
      ["configmaps"],
      "the watch of the stored objects' type is started",
    );
    emit(live("b", false, "3"), "delete");
    await until(() => writes.length === 1);
    const b = writes[0]?.find((e) => e.name === "b");
    assert.deepEqual([b?.status, b?.reconcile, b?.sourceHash], ["NotFound", "Failed", "abc"]);
    assert.equal(writes[0]?.find((e) => e.name === "a")?.status, "Current");
    status.stop();
  });

  it("a restart keeps the ids of the overflow group a crash during a large rename left, beside the main group's", async () => {
    const group = (name: string, labels: Record<string, string>, ids: string[]): KubeObject =>
      ({
        apiVersion: "kpt.dev/v1alpha1",
        kind: "ResourceGroup",
        metadata: { name, namespace: identity.namespace, labels },
        spec: { resources: ids.map((n) => ({ group: "", kind: "ConfigMap", namespace: "ns", name: n })) },
      }) as unknown as KubeObject;
    const ours = { "driftless.dev/inventory-overflow-of": identity.name };
    const stored = group(identity.name, {}, ["old"]);
    const { status, kept } = harness({ stored, pending: group(`${identity.name}.pending`, ours, ["new"]) });
    await status.settled();
    assert.deepEqual(
      kept[0]?.ids.map((id) => id.name),
      ["old", "new"],
    );
    status.stop();
    const foreign = harness({ stored, pending: group(`${identity.name}.pending`, {}, ["forged"]) });
    await foreign.status.settled();
    assert.deepEqual(
      foreign.kept[0]?.ids.map((id) => id.name),
      ["old"],
      "a group of that name that is not our overflow is not read",
    );
    foreign.status.stop();
  });

  it("an object another inventory owns (KNV1060) is Skipped, as Config Sync's applier skips it, and its OwnershipOverlap is dated once", async () => {
    const foreign = {
      ...live("taken", false, "2"),
      metadata: {
        ...live("taken", false, "2").metadata,
        annotations: { "config.k8s.io/owning-inventory": "team_repo-sync" },
      },
    } as KubeObject;
    const { status, writes } = harness({ objects: new Map([["taken", foreign]]) });
    const conflict: ApplyOutcome = {
      ...outcome("taken"),
      operation: "failed",
      health: undefined,
      error: new ManagementConflictError(outcome("taken").desired, "team_repo-sync", "root-sync"),
    };
    await status.afterPass([conflict], "abc");
    const entry = writes[0]?.[0];
    assert.deepEqual([entry?.actuation, entry?.reconcile, entry?.status], ["Skipped", "Skipped", "Unknown"]);
    const overlap = entry?.conditions?.find((c) => c.type === "OwnershipOverlap");
    assert.equal(overlap?.status, "True");
    assert.match(overlap?.lastTransitionTime ?? "", /^\d{4}-\d{2}-\d{2}T/);
    await delay(5);
    await status.afterPass([conflict], "abc");
    const again = writes[1]?.[0]?.conditions?.find((c) => c.type === "OwnershipOverlap");
    assert.equal(again?.lastTransitionTime, overlap?.lastTransitionTime, "an unchanged owner keeps its time");
    status.stop();
  });
});
