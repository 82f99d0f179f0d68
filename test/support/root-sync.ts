/** A RootSync of a test's own in config-management-system, following `config/` of a TestRepo, and reading its status. */
import type { TestContext } from "node:test";
import { eventually } from "./eventually.ts";
import type { JsonObject } from "./fixtures.ts";
import type { TestRepo } from "./git.ts";
import { coreApi, customApi, statusCode } from "./kube.ts";

export const rootSyncNamespace = "config-management-system";
export const rootSyncs = {
  group: "configsync.gke.io",
  version: "v1beta1",
  namespace: rootSyncNamespace,
  plural: "rootsyncs",
} as const;

/** A Secret in config-management-system for a RootSync to name (credentials, a CA), deleted after the test. */
export async function rootSyncSecret(t: TestContext, name: string, stringData: Record<string, string>): Promise<void> {
  await coreApi().createNamespacedSecret({ namespace: rootSyncNamespace, body: { metadata: { name }, stringData } });
  t.after(() =>
    coreApi()
      .deleteNamespacedSecret({ namespace: rootSyncNamespace, name })
      .catch(() => undefined),
  );
}

export interface RootSyncOptions {
  readonly annotations?: Readonly<Record<string, string>>;
  /** More `spec` fields (`override`, ...), over the defaults. */
  readonly spec?: Readonly<JsonObject>;
}

export async function createRootSync(name: string, repo: TestRepo, options: RootSyncOptions = {}): Promise<void> {
  try {
    await coreApi().createNamespace({ body: { metadata: { name: rootSyncNamespace } } });
  } catch (error) {
    if (statusCode(error) !== 409) throw error;
  }
  await customApi().createNamespacedCustomObject({
    ...rootSyncs,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name, namespace: rootSyncNamespace, annotations: { ...options.annotations } },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none" },
        ...options.spec,
      },
    },
  });
}

export async function rootSyncStatus(name: string): Promise<JsonObject> {
  const sync = (await customApi().getNamespacedCustomObject({ ...rootSyncs, name })) as JsonObject;
  return (sync["status"] ?? {}) as JsonObject;
}

/**
 * Read-modify-write of a RootSync's spec, again on a conflict: its reconciler writes the RootSync too
 * (finalizer, status), so a plain replace can lose a race with it.
 */
export async function updateRootSyncSpec(name: string, change: (spec: JsonObject) => JsonObject): Promise<void> {
  await eventually(
    async () => {
      const current = (await customApi().getNamespacedCustomObject({ ...rootSyncs, name })) as JsonObject;
      try {
        const body = { ...current, spec: change(current["spec"] as JsonObject) };
        await customApi().replaceNamespacedCustomObject({ ...rootSyncs, name, body });
        return true;
      } catch (error) {
        if (statusCode(error) === 409) return false;
        throw error;
      }
    },
    { what: `RootSync ${name} to take a new spec` },
  );
}

/**
 * The errors of `status.sync` once a pass over `commit` has ended (Syncing False for it). A pass that applies
 * for over 5 s writes status.sync for its commit before it ends, with only the errors met so far.
 */
export function syncErrorsAt(name: string, commit: string): Promise<JsonObject[]> {
  return eventually(
    async () => {
      const status = await rootSyncStatus(name);
      const sync = status["sync"] as JsonObject | undefined;
      const errors = (sync?.["errors"] ?? []) as JsonObject[];
      const syncing = ((status["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Syncing");
      const ended = syncing?.["status"] === "False" && syncing["commit"] === commit;
      return ended && sync?.["commit"] === commit && errors.length > 0 ? errors : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report sync errors at ${commit.slice(0, 7)}` },
  );
}

/** Waits until `lastSyncedCommit` is `commit`. */
export function rootSynced(name: string, commit: string, timeoutMs = 60_000): Promise<JsonObject> {
  return eventually(
    async () => {
      const status = await rootSyncStatus(name);
      return status["lastSyncedCommit"] === commit ? status : undefined;
    },
    { timeoutMs, what: `RootSync ${name} synced to ${commit.slice(0, 7)}` },
  );
}

/** Waits until the RootSync is gone (its finalizers done). */
export function rootSyncGone(name: string, timeoutMs = 60_000): Promise<true> {
  return eventually(
    async () => {
      try {
        await customApi().getNamespacedCustomObject({ ...rootSyncs, name });
        return false;
      } catch (error) {
        if (statusCode(error) === 404) return true;
        throw error;
      }
    },
    { timeoutMs, what: `RootSync ${name} to disappear` },
  );
}
