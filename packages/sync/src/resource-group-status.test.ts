import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { ApplyOutcome, Inventory, ResourceStatusEntry } from "@driftless/applier";
import { configMapMapping, KubeApiError, type KubeObject } from "@driftless/kube";
import type { InformerListener, InformerLiveState } from "./live-cache.ts";
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

function harness() {
  let listener: InformerListener | undefined;
  const writes: ResourceStatusEntry[][] = [];
  const inventory = {
    writeStatus: (statuses: readonly ResourceStatusEntry[]) => {
      writes.push([...statuses]);
      return Promise.resolve();
    },
    sizeBytes: 0,
  } as unknown as Inventory;
  const liveState = {
    onEvent: (l: InformerListener) => {
      listener = l;
      return () => undefined;
    },
    get: () => Promise.resolve(undefined),
  } as unknown as InformerLiveState;
  const state = { passing: false };
  const status = new ResourceGroupStatus({
    inventory,
    identity,
    live: liveState,
    log: createLogger({}, { level: "error", write: () => undefined }),
    passing: () => state.passing,
    debounceMs: 20,
  });
  const emit = (object: KubeObject): void => listener?.("update", configMapMapping, object);
  return { status, writes, emit, state };
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
});
