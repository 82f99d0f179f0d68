import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { managerAnnotationValue, resourceId } from "@driftless/api";
import { setImmediate } from "node:timers/promises";
import { configMapMapping, namespaceMapping, type KubeClient, type KubeObject } from "@driftless/kube";
import { createLogger } from "./log.ts";
import { ClaimAction, claimAction, claimsSync, UndeclaredClaims } from "./undeclared-claims.ts";

const sync = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
const ours = managerAnnotationValue(sync.kind, sync.namespace, sync.name);

/** A ConfigMap made by hand with Config Sync's metadata, as Config Sync's TestDriftKubectlApply* e2e tests make it. */
function handMade(
  overrides: { annotations?: Record<string, string>; metadata?: Partial<KubeObject["metadata"]> } = {},
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "test-cm1",
      namespace: "ns",
      annotations: {
        "configmanagement.gke.io/managed": "enabled",
        "configsync.gke.io/resource-id": resourceId({
          group: "",
          kind: "ConfigMap",
          namespace: "ns",
          name: "test-cm1",
        }),
        "configsync.gke.io/manager": ours,
        ...overrides.annotations,
      },
      ...overrides.metadata,
    },
  };
}

void describe("undeclared objects claiming a sync", () => {
  void it("claim it only with management enabled, their own resource-id and this sync as manager", () => {
    assert.equal(claimsSync(handMade(), configMapMapping, sync), true);
    assert.equal(
      claimsSync(handMade({ annotations: { "configmanagement.gke.io/managed": "disabled" } }), configMapMapping, sync),
      false,
    );
    // Copied from another object: its resource-id is not this object's.
    const copied = resourceId({ group: "", kind: "ConfigMap", namespace: "ns", name: "other" });
    assert.equal(
      claimsSync(handMade({ annotations: { "configsync.gke.io/resource-id": copied } }), configMapMapping, sync),
      false,
    );
    assert.equal(
      claimsSync(handMade({ annotations: { "configsync.gke.io/manager": "ns_repo-sync" } }), configMapMapping, sync),
      false,
    );
  });

  void it("are deleted, released (detach, special Namespaces) or left (ownerReferences, being deleted) as Config Sync's deleteType", () => {
    assert.equal(claimAction(handMade(), configMapMapping, sync).action, ClaimAction.Delete);
    const owned = handMade({ metadata: { ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: "p", uid: "u" }] } });
    assert.equal(claimAction(owned, configMapMapping, sync).action, ClaimAction.Leave);
    const deleting = handMade({ metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } });
    assert.equal(claimAction(deleting, configMapMapping, sync).action, ClaimAction.Leave);
    const detached = handMade({ annotations: { "client.lifecycle.config.k8s.io/deletion": "detach" } });
    assert.equal(claimAction(detached, configMapMapping, sync).action, ClaimAction.Release);
    const special: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "kube-system" } };
    assert.equal(claimAction(special, namespaceMapping, sync).action, ClaimAction.Release);
    const plain: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } };
    assert.equal(claimAction(plain, namespaceMapping, sync).action, ClaimAction.Delete);
  });

  void it("are left when another inventory owns them, as prune abandons them; ours or none is a claim", () => {
    const owning = (inventory: string) => handMade({ annotations: { "config.k8s.io/owning-inventory": inventory } });
    assert.equal(claimAction(owning("kpt-system_other-app"), configMapMapping, sync).action, ClaimAction.Leave);
    assert.equal(
      claimAction(owning("config-management-system_root-sync"), configMapMapping, sync).action,
      ClaimAction.Delete,
    );
  });
});

void describe("settling claims", () => {
  void it("reads at most 16 claims at once, and waiting ones again after each pass", async () => {
    let open = 0;
    let most = 0;
    const pending: (() => void)[] = [];
    // Every read waits for the test to answer it: how many are open at once is what is measured.
    const client = {
      get: () => {
        open++;
        most = Math.max(most, open);
        return new Promise((resolve) =>
          pending.push(() => {
            open--;
            resolve(undefined);
          }),
        );
      },
    } as unknown as KubeClient;
    let known = false;
    const claims = new UndeclaredClaims({
      client: () => client,
      sync,
      lastAppliedAnnotation: "x",
      log: createLogger({}, { write: () => undefined }),
      declared: () => (known ? false : undefined),
      declarationsChanging: () => false,
    });
    const seen = (i: number) => ({ mapping: configMapMapping, namespace: "ns", name: `cm-${i}` });
    // Before the first declaration they wait; the first retry settles them, 16 at a time.
    for (let i = 0; i < 100; i++) claims.claim(`k${i}`, seen(i));
    assert.equal(pending.length, 0);
    known = true;
    claims.retryWaiting(new Set());
    let answered = 0;
    while (pending.length > 0) {
      pending.shift()?.();
      answered++;
      await setImmediate();
    }
    assert.equal(answered, 100);
    assert.equal(most, 16);
    // A claim that waited is looked at again after the next pass, whatever the pass was.
    known = false;
    claims.claim("late", seen(100));
    known = true;
    claims.retryWaiting(new Set());
    assert.equal(pending.length, 1);
  });
});

void describe("queued claims", () => {
  void it("are all settled when the claims drained before them turn out declared, not left queued once none settles", async () => {
    const pending: (() => void)[] = [];
    const reads: string[] = [];
    const client = {
      get: (_mapping: unknown, _namespace: unknown, name: string) => {
        reads.push(name);
        return new Promise((resolve) => pending.push(() => resolve(undefined)));
      },
    } as unknown as KubeClient;
    const declaredNow = new Set<string>();
    const claims = new UndeclaredClaims({
      client: () => client,
      sync,
      lastAppliedAnnotation: "x",
      log: createLogger({}, { write: () => undefined }),
      declared: (key) => declaredNow.has(key),
      declarationsChanging: () => false,
    });
    const seen = (name: string) => ({ mapping: configMapMapping, namespace: "ns", name });
    for (let i = 0; i < 16; i++) claims.claim(`s${i}`, seen(`s${i}`));
    // Queued behind the 16 being settled: the first 16 of them a pass then declares (it adopts them).
    for (let i = 0; i < 17; i++) claims.claim(`q${i}`, seen(`q${i}`));
    for (let i = 0; i < 16; i++) declaredNow.add(`q${i}`);
    while (pending.length > 0) {
      pending.shift()?.();
      await setImmediate();
    }
    assert.ok(reads.includes("q16"), "the last queued claim was never settled");
  });
});

void describe("a flood of claims", () => {
  void it("is remembered up to 10,000 claims, queued ones included, as waiting ones are bounded", async () => {
    const held: (() => void)[] = [];
    let reads = 0;
    const client = {
      get: () => {
        reads++;
        // The first 16 hold their places while the flood arrives; the rest are gone when read.
        return reads <= 16 ? new Promise((resolve) => held.push(() => resolve(undefined))) : Promise.resolve(undefined);
      },
    } as unknown as KubeClient;
    const claims = new UndeclaredClaims({
      client: () => client,
      sync,
      lastAppliedAnnotation: "x",
      log: createLogger({}, { write: () => undefined }),
      declared: () => false,
      declarationsChanging: () => false,
    });
    for (let i = 0; i < 12_000; i++)
      claims.claim(`k${i}`, { mapping: configMapMapping, namespace: "ns", name: `cm-${i}` });
    for (const release of held) release();
    while (reads < 12_000) {
      const before = reads;
      await setImmediate();
      if (reads === before) break;
    }
    assert.ok(reads <= 16 + 10_000, `${reads} claims were remembered`);
  });
});
