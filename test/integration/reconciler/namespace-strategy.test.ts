/**
 * Config Sync's e2e TestNamespaceStrategy replayed on the real control plane: an implicit Namespace,
 * released when the strategy turns explicit, then declared in Git, removed from Git while an object stays
 * in it, and pruned once that object goes too.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { ManagedAnnotation, UserAnnotation } from "@driftless/api";
import { Annotator } from "@driftless/objectmatcher";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  statusCode,
  suffix,
  syncErrorsAt,
  TestRepo,
  updateRootSyncSpec,
} from "../../support/index.ts";

const json = (value: unknown): string => JSON.stringify(value);
const configMap = (name: string, namespace: string): string =>
  json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { k: name } });
const namespace = (name: string): string => json({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

function deleteAfter(t: TestContext, name: string): void {
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name })
      .catch(() => undefined);
  });
}

async function annotationsOf(name: string): Promise<Record<string, string>> {
  return (await coreApi().readNamespace({ name })).metadata?.annotations ?? {};
}

/** Resolves once the Namespace is gone or being deleted. */
function namespaceDeleted(name: string): Promise<true> {
  return eventually(
    async () => {
      try {
        const ns = await coreApi().readNamespace({ name });
        return ns.metadata?.deletionTimestamp !== undefined ? true : undefined;
      } catch (error) {
        if (statusCode(error) === 404) return true;
        throw error;
      }
    },
    { timeoutMs: 60_000, what: `Namespace ${name} to be deleted` },
  );
}

test("an implicit Namespace released by namespaceStrategy explicit, then declared in Git, loses the detach driftless added, so removing it from Git prunes it once nothing stays in it", async (t) => {
  const id = suffix();
  const name = `ns-strategy-${id}`;
  const foo = `foo-implicit-${id}`;
  deleteAfter(t, foo);
  const repo = await TestRepo.create(t);
  // Something stays declared throughout, so no step is an empty source (KNV2006).
  await repo.write("config/keep.yaml", configMap(`keep-${id}`, "default"));
  await repo.write("config/cm1.yaml", configMap("cm1", foo));
  const withCm1 = await repo.commit("cm1 in an undeclared namespace");
  await createRootSync(name, repo, { spec: { override: { namespaceStrategy: "explicit" } } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  const missingNamespace = await syncErrorsAt(name, withCm1);
  assert.ok(
    missingNamespace.some((e) => String(e["errorMessage"]).includes(`namespaces "${foo}" not found`)),
    json(missingNamespace),
  );

  // implicit: the Namespace is created, managed and marked to be detached.
  await updateRootSyncSpec(name, (spec) => ({ ...spec, override: { namespaceStrategy: "implicit" } }));
  await rootSynced(name, withCm1);
  const implicit = await annotationsOf(foo);
  assert.equal(implicit[UserAnnotation.LifecycleDeletion], "detach");
  assert.equal(implicit[ManagedAnnotation.Managed], "enabled");
  assert.equal(implicit[ManagedAnnotation.Manager], `:root_${name}`);

  // explicit again: released, still detached, without Config Sync's metadata; driftless's record keeps only
  // the detach it applied (as Config Sync's field manager keeps owning it after its release).
  await updateRootSyncSpec(name, (spec) => ({ ...spec, override: { namespaceStrategy: "explicit" } }));
  const released = await eventually(
    async () => {
      const annotations = await annotationsOf(foo);
      return annotations[ManagedAnnotation.Manager] === undefined ? annotations : undefined;
    },
    { timeoutMs: 60_000, what: `Namespace ${foo} to be released` },
  );
  assert.equal(released[UserAnnotation.LifecycleDeletion], "detach");
  assert.equal(released[ManagedAnnotation.Managed], undefined);
  assert.deepEqual(
    Object.keys(released).filter((key) => key.startsWith("configsync.gke.io/") || key.startsWith("configmanagement")),
    [],
  );

  // Declared in Git without the annotation: managed again, and the detach driftless added is gone.
  await repo.write("config/namespace-foo.yaml", namespace(foo));
  const declared = await repo.commit("declare the namespace");
  await rootSynced(name, declared);
  const managed = await annotationsOf(foo);
  assert.equal(managed[ManagedAnnotation.Managed], "enabled");
  assert.equal(managed[ManagedAnnotation.Manager], `:root_${name}`);
  assert.equal(
    managed[UserAnnotation.LifecycleDeletion],
    undefined,
    "the detach driftless added to the implicit Namespace survived its declaration without it",
  );
  const record = new Annotator().getOriginalConfiguration({ metadata: { annotations: managed } }) as
    { metadata?: { annotations?: Record<string, string> } } | undefined;
  assert.ok(record !== undefined, "a managed Namespace without its last-applied record");
  assert.equal(record.metadata?.annotations?.[UserAnnotation.LifecycleDeletion], undefined);

  // Removed from Git while cm1 stays in it: kept, in Config Sync's words.
  await repo.remove("config/namespace-foo.yaml");
  const removed = await repo.commit("prune the namespace");
  const inUse = await syncErrorsAt(name, removed);
  assert.ok(
    inUse.some(
      (e) =>
        e["code"] === "2009" &&
        String(e["errorMessage"]).includes(`skipped delete of Namespace, /${foo}: namespace still in use: ${foo}`),
    ),
    json(inUse),
  );
  assert.equal((await coreApi().readNamespace({ name: foo })).metadata?.deletionTimestamp, undefined);

  // cm1 goes too: both are pruned.
  await repo.remove("config/cm1.yaml");
  const empty = await repo.commit("prune cm1");
  await rootSynced(name, empty);
  await namespaceDeleted(foo);
});
