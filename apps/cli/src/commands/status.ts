import { resourceGroupMapping } from "@driftless/applier";
import { Informer, KubeClient } from "@driftless/kube";
import { emptyGroup, sorted, syncMappings } from "../sync-objects.ts";
import { printable, printableJson } from "../terminal-text.ts";
import { OutputFormat, render } from "./status-render.ts";
import { exitCode, syncReport, type SyncReport } from "../sync-report.ts";

export interface StatusOptions {
  readonly kubeconfig: string | undefined;
  /** Only the syncs in this namespace (default: all). */
  readonly namespace?: string;
  /** Also the managed objects and their kstatus, from each sync's ResourceGroup. */
  readonly resources: boolean;
  readonly format: OutputFormat;
  /** Redraw on every change until `signal` aborts (SIGINT). */
  readonly watch: boolean;
  readonly signal?: AbortSignal;
  /** Whether the output is a terminal: a redraw then replaces the screen instead of following it. */
  readonly tty?: boolean;
}

/**
 * `driftless status`: every RootSync and RepoSync (or those of one namespace) with its source,
 * commits, errors and stall, and with `resources` the objects it manages. Exit 0 when every sync is
 * synced, 1 otherwise; with `watch`, the code of the last view drawn.
 */
export async function status(options: StatusOptions, write: (text: string) => void): Promise<number> {
  const client = await KubeClient.fromKubeconfig(options.kubeconfig);
  try {
    return options.watch ? await watchStatus(client, options, write) : await statusOnce(client, options, write);
  } finally {
    client.close();
  }
}

async function statusOnce(client: KubeClient, options: StatusOptions, write: (text: string) => void): Promise<number> {
  const reports: SyncReport[] = [];
  for (const mapping of syncMappings) {
    const list = await client.list(mapping, options.namespace === undefined ? {} : { namespace: options.namespace });
    for (const sync of sorted(list.items)) {
      const group = options.resources
        ? ((await client.get(resourceGroupMapping, sync.metadata.namespace, sync.metadata.name)) ?? emptyGroup)
        : undefined;
      reports.push(syncReport(sync, group));
    }
  }
  write(render(reports, options.format));
  return exitCode(reports);
}

/**
 * Informers on RootSyncs and RepoSyncs (and ResourceGroups with --resources): every change redraws
 * the view, and only a view that differs from the last one is written.
 */
async function watchStatus(client: KubeClient, options: StatusOptions, write: (text: string) => void): Promise<number> {
  const informerOptions = {
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    onError: (error: Error) => process.stderr.write(`driftless: watch: ${printable(error.message)}\n`),
  };
  const syncs = syncMappings.map((m) => new Informer(client, m, informerOptions));
  const groups = options.resources ? new Informer(client, resourceGroupMapping, informerOptions) : undefined;
  const informers = groups === undefined ? syncs : [...syncs, groups];
  let last = "";
  let code = 0;
  let pending: NodeJS.Immediate | undefined;
  const draw = (): void => {
    pending = undefined;
    const reports = syncs.flatMap((informer) =>
      sorted(informer.list()).map((sync) =>
        syncReport(sync, groups && (groups.get(sync.metadata.namespace, sync.metadata.name) ?? emptyGroup)),
      ),
    );
    code = exitCode(reports);
    const view =
      options.format === OutputFormat.Json
        ? `${printableJson(JSON.stringify({ syncs: reports }))}\n`
        : render(reports, options.format);
    if (view === last) return;
    last = view;
    if (options.format === OutputFormat.Text && options.tty === true) write("\x1b[H\x1b[2J");
    write(options.format === OutputFormat.Yaml ? `---\n${view}` : view);
  };
  // Changes arrive in bursts (a status write per phase): one redraw per turn of the event loop.
  const schedule = (): void => void (pending ??= setImmediate(draw));
  for (const informer of informers) {
    for (const event of ["add", "update", "delete"] as const) informer.on(event, schedule);
    informer.start();
  }
  try {
    await Promise.all(informers.map((i) => i.synced()));
    draw();
    await aborted(options.signal);
    return code;
  } finally {
    if (pending !== undefined) clearImmediate(pending);
    await Promise.all(informers.map((i) => i.stop()));
  }
}

function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal === undefined) return;
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
