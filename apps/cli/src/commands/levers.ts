/**
 * `driftless sync | suspend | resume TYPE NAME`: ask for a pass now, pause, resume. Each is an
 * annotation patched as the user (sync-actions.ts); `sync --wait` then follows the sync until its
 * reconciler says a pass newer than the request has finished, and exits 1 if that pass failed, if the
 * manager stalled the sync (no reconciler runs to answer until its spec changes), if the sync is
 * suspended (its pass applies nothing, so there is nothing to wait for: Flux's `reconcile` refuses a
 * suspended object too), or if the API server refuses to let the user follow the sync (a user who may
 * patch it but not watch it); Ctrl-C exits 130, saying the request stands.
 */
import { getCondition, isSuspended, SyncConditionType, type SyncCondition } from "@driftless/api";
import { Informer, KubeClient, isForbidden, isNotFound, type KubeObject } from "@driftless/kube";
import { aborted, interruptedExitCode, isRefusal, unlessAborted } from "../interrupt.ts";
import { act, currentRequest, requestAnswered, SyncAction } from "../sync-actions.ts";
import { mappingOf, type SyncRef } from "../sync-objects.ts";
import { syncReport, SyncState } from "../sync-report.ts";
import { cell } from "./status-render.ts";

export interface LeverOptions {
  readonly kubeconfig: string | undefined;
  /** `sync` only: wait for the answering pass. */
  readonly wait: boolean;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export async function lever(
  action: SyncAction,
  ref: SyncRef,
  options: LeverOptions,
  out: (line: string) => void,
): Promise<number> {
  const client = await KubeClient.fromKubeconfig(options.kubeconfig);
  const what = `${ref.kind} ${ref.namespace}/${ref.name}`;
  try {
    const result = await unlessAborted(act(client, ref, action), options.signal).catch((error: unknown) => {
      if (options.signal?.aborted === true) throw error;
      if (isNotFound(error)) throw new Error(`${what} not found`, { cause: error });
      if (isForbidden(error)) throw new Error(`the API server refused: ${(error as Error).message}`, { cause: error });
      throw error;
    });
    if (action === SyncAction.Suspend) out(`${what} suspended: nothing is applied, pruned or corrected until resume`);
    if (action === SyncAction.Resume) out(`${what} resumed`);
    if (action !== SyncAction.Sync || result.request === undefined) return 0;
    out(`${what}: pass requested (driftless.dev/sync-requested-at=${result.request})`);
    // The patch's answer is the sync as it is now: suspended, the pass it asks for applies nothing.
    if (isSuspended(result.object.metadata.annotations)) {
      out(`${what}: suspended: its pass applies, prunes and corrects nothing until \`driftless resume\``);
      return options.wait ? 1 : 0;
    }
    if (!options.wait) return 0;
    const answer = await waitForAnswer(client, ref, result.request, options);
    switch (answer.outcome) {
      case "refused":
        out(`${what}: cannot follow the sync, the API server refused: ${answer.error.message}`);
        out(`${what}: the request stands; its reconciler answers it whether or not this command waits`);
        return 1;
      case "stalled": {
        const stalled = syncReport(answer.sync).stalled;
        out(cell(`${what}: STALLED (${stalled?.reason ?? ""}): ${stalled?.message ?? ""}`));
        out(`${what}: no reconciler runs to answer the request until the sync's spec is fixed`);
        return 1;
      }
      case "interrupted":
        out(`${what}: interrupted before a pass answered (the request stands; its reconciler still answers it)`);
        return interruptedExitCode;
      case "deleted":
        out(`${what}: deleted before a pass answered; nothing will answer the request`);
        return 1;
      case "timeout":
        out(
          `${what}: no pass answered within the timeout (is its reconciler running?)${
            answer.error === undefined ? "" : `; the last error following it: ${answer.error.message}`
          }`,
        );
        return 1;
      case "answered":
        break;
    }
    const report = syncReport(answer.sync);
    if (report.state === SyncState.Suspended) {
      out(`${what}: suspended before its pass: nothing was applied (\`driftless resume\` first)`);
      return 1;
    }
    out(`${what}: ${report.state} at commit ${report.commits.sync || report.commits.source || "-"}`);
    for (const e of report.errors) out(cell(`  ${e.code} ${e.phase}: ${e.message}`));
    const failed = report.state === SyncState.Error || report.state === SyncState.Stalled || report.errors.length > 0;
    return failed ? 1 : 0;
  } catch (error) {
    if (options.signal?.aborted !== true) throw error;
    out(`${what}: interrupted (the API server may or may not have taken the change)`);
    return interruptedExitCode;
  } finally {
    client.close();
  }
}

/** How a wait for the answering pass ended. */
type Answer =
  | { readonly outcome: "answered"; readonly sync: KubeObject }
  /** The manager judged this generation of the sync and set no reconciler up: nothing will answer. */
  | { readonly outcome: "stalled"; readonly sync: KubeObject }
  /** The sync is gone, or being deleted: its reconciler answers no more requests. */
  | { readonly outcome: "deleted" }
  /** The API server refused to let this user follow the sync (403, 401): waiting longer will not help. */
  | { readonly outcome: "refused"; readonly error: Error }
  /** With the last failure to list or watch the sync, if any. */
  | { readonly outcome: "timeout"; readonly error?: Error }
  | { readonly outcome: "interrupted" };

/**
 * Stalled for the generation the user sees by the manager's verdict on the spec (reason Validation, which
 * leaves Reconciling as it was, as Config Sync's does), which only a change of the spec lifts. A reconciler
 * failing or being set up (Stalled with Reconciling True) may still come up and answer, so that is waited for.
 */
function stalledForGood(sync: KubeObject): boolean {
  const status = (sync["status"] ?? {}) as { observedGeneration?: number; conditions?: SyncCondition[] };
  const stalled = getCondition(status.conditions, SyncConditionType.Stalled);
  return (
    stalled?.status === "True" &&
    (stalled.reason === "Validation" ||
      getCondition(status.conditions, SyncConditionType.Reconciling)?.status !== "True") &&
    status.observedGeneration === sync.metadata.generation
  );
}

/** Follows the sync by a watch until the pass answering `request` (or a request replacing it) has finished, a stall, the timeout, a refusal or Ctrl-C. */
async function waitForAnswer(
  client: KubeClient,
  ref: SyncRef,
  request: string,
  options: LeverOptions,
): Promise<Answer> {
  let done: (answer: Answer) => void = () => undefined;
  let lastError: Error | undefined;
  const informer = new Informer(client, mappingOf(ref.kind), {
    namespace: ref.namespace,
    fieldSelector: `metadata.name=${ref.name}`,
    onError: (error) => {
      lastError = error;
      if (isRefusal(error)) done({ outcome: "refused", error });
    },
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<Answer>((resolve) => {
      done = resolve;
      // Ours, and any request that replaced it while we wait: the reconciler answers the latest only.
      const requests = new Set([request]);
      const check = (sync: KubeObject): void => {
        const current = currentRequest(sync);
        if (current !== undefined) requests.add(current);
        if (requestAnswered(sync, requests)) resolve({ outcome: "answered", sync });
        else if (sync.metadata.deletionTimestamp !== undefined) resolve({ outcome: "deleted" });
        else if (stalledForGood(sync)) resolve({ outcome: "stalled", sync });
      };
      informer.on("add", check);
      informer.on("update", check);
      informer.on("delete", () => resolve({ outcome: "deleted" }));
      // Deleted between the patch and the first list: the list finds nothing, and no event will come.
      void informer.synced().then(
        () => {
          if (informer.get(ref.namespace, ref.name) === undefined) resolve({ outcome: "deleted" });
        },
        () => undefined,
      );
      timer = setTimeout(
        () => resolve(lastError === undefined ? { outcome: "timeout" } : { outcome: "timeout", error: lastError }),
        options.timeoutMs,
      );
      void aborted(options.signal).then(() => resolve({ outcome: "interrupted" }));
      informer.start();
    });
  } finally {
    clearTimeout(timer);
    await informer.stop();
  }
}
