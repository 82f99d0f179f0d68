/**
 * `driftless sync | suspend | resume TYPE NAME`: ask for a pass now, pause, resume. Each is an
 * annotation patched as the user (sync-actions.ts); `sync --wait` then follows the sync until its
 * reconciler says a pass newer than the request has finished, and exits 1 if that pass failed.
 */
import { Informer, KubeClient, isForbidden, isNotFound, type KubeObject } from "@driftless/kube";
import { act, requestAnswered, SyncAction } from "../sync-actions.ts";
import { mappingOf, type SyncRef } from "../sync-objects.ts";
import { syncReport, SyncState } from "../sync-report.ts";

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
    const result = await act(client, ref, action).catch((error: unknown) => {
      if (isNotFound(error)) throw new Error(`${what} not found`, { cause: error });
      if (isForbidden(error)) throw new Error(`the API server refused: ${(error as Error).message}`, { cause: error });
      throw error;
    });
    if (action === SyncAction.Suspend) out(`${what} suspended: nothing is applied, pruned or corrected until resume`);
    if (action === SyncAction.Resume) out(`${what} resumed`);
    if (action !== SyncAction.Sync || result.request === undefined) return 0;
    out(`${what}: pass requested (driftless.dev/sync-requested-at=${result.request})`);
    if (!options.wait) return 0;
    const answered = await waitForAnswer(client, ref, result.request, options);
    if (answered === undefined) {
      out(`${what}: no pass answered within the timeout (is its reconciler running?)`);
      return 1;
    }
    const report = syncReport(answered);
    out(`${what}: ${report.state} at commit ${report.commits.sync || report.commits.source || "-"}`);
    for (const e of report.errors) out(`  ${e.code} ${e.phase}: ${e.message}`);
    const failed = report.state === SyncState.Error || report.state === SyncState.Stalled || report.errors.length > 0;
    return failed ? 1 : 0;
  } finally {
    client.close();
  }
}

/** The sync once a pass newer than `request` has finished, by a watch on it; undefined at the timeout. */
async function waitForAnswer(
  client: KubeClient,
  ref: SyncRef,
  request: string,
  options: LeverOptions,
): Promise<KubeObject | undefined> {
  const informer = new Informer(client, mappingOf(ref.kind), {
    namespace: ref.namespace,
    fieldSelector: `metadata.name=${ref.name}`,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<KubeObject | undefined>((resolve) => {
      const check = (sync: KubeObject): void => {
        if (requestAnswered(sync, request)) resolve(sync);
      };
      informer.on("add", check);
      informer.on("update", check);
      timer = setTimeout(() => resolve(undefined), options.timeoutMs);
      options.signal?.addEventListener("abort", () => resolve(undefined), { once: true });
      informer.start();
    });
  } finally {
    clearTimeout(timer);
    await informer.stop();
  }
}
