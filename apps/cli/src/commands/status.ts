import { resourceGroupMapping } from "@driftless/applier";
import { Informer, isNotFound, KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { aborted, interruptedExitCode, isRefusal, unlessAborted } from "../interrupt.ts";
import { emptyGroup, sorted, syncMappings } from "../sync-objects.ts";
import { printable, printableJson } from "../terminal-text.ts";
import { OutputFormat, render } from "./status-render.ts";
import { exitCode, syncReport, type SyncReport } from "../sync-report.ts";

export interface StatusOptions {
  readonly kubeconfig: string | undefined;
  /** Only the syncs in this namespace (default: all). */
  readonly namespace?: string;
  /** Only the syncs of this name, RootSyncs and RepoSyncs alike (`--name`, as nomos). */
  readonly name?: string;
  /** Each request's deadline (`--timeout`, nomos's timeout for talking to the cluster); the client's default without. */
  readonly timeoutMs?: number;
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
 * synced, 1 otherwise; with `watch`, the code of the last view drawn. A kind the user may not read
 * (RBAC's 403) is reported on stderr and left out, so a namespace's tenant sees its RepoSyncs: exit 1
 * when every kind is refused. Ctrl-C (`signal`) before there is a view to show: 130, at once.
 */
export async function status(options: StatusOptions, write: (text: string) => void): Promise<number> {
  const timeout = options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
  const client = await KubeClient.fromKubeconfig(options.kubeconfig, timeout);
  try {
    return options.watch ? await watchStatus(client, options, write) : await statusOnce(client, options, write);
  } catch (error) {
    if (options.signal?.aborted === true) return interruptedExitCode;
    throw error;
  } finally {
    client.close();
  }
}

const warn = (text: string): void => void process.stderr.write(`driftless: ${printable(text)}\n`);

const named = (syncs: KubeObject[], name: string | undefined): KubeObject[] =>
  name === undefined ? syncs : syncs.filter((s) => s.metadata.name === name);

/** The plural a refusal names: "RootSyncs", "ResourceGroups". */
const kinds = (mapping: ResourceMapping): string => `${mapping.kind}s`;

/**
 * Why a kind cannot be listed, when asking again will not help: the API server's refusal (403, 401), or a
 * kind it does not serve (its CRD not installed), in the words nomos status reports it with; else undefined.
 */
function unreadable(error: unknown, mapping: ResourceMapping): string | undefined {
  if (isRefusal(error)) return error.message;
  if (!isNotFound(error)) return undefined;
  return `no matches for kind ${JSON.stringify(mapping.kind)} in version ${JSON.stringify(`${mapping.group}/${mapping.version}`)} (is its CRD installed?)`;
}

async function statusOnce(client: KubeClient, options: StatusOptions, write: (text: string) => void): Promise<number> {
  const signal = options.signal;
  const abortable = signal === undefined ? {} : { signal };
  const reports: SyncReport[] = [];
  // The API server's refusal per kind, said once each (a ResourceGroup may be refused in every namespace).
  const refusals = new Map<string, string>();
  let listed = 0;
  for (const mapping of syncMappings) {
    let items: KubeObject[];
    try {
      const list = client.list(mapping, {
        ...abortable,
        ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      });
      items = (await unlessAborted(list, signal)).items;
    } catch (error) {
      const why = signal?.aborted === true ? undefined : unreadable(error, mapping);
      if (why === undefined) throw error;
      refusals.set(kinds(mapping), why);
      continue;
    }
    listed++;
    for (const sync of named(sorted(items), options.name)) {
      let group: KubeObject | undefined;
      if (options.resources) {
        try {
          const got = client.get(resourceGroupMapping, sync.metadata.namespace, sync.metadata.name, abortable);
          group = (await unlessAborted(got, signal)) ?? emptyGroup;
        } catch (error) {
          if (!isRefusal(error) || signal?.aborted === true) throw error;
          // Shown without objects rather than as managing none.
          refusals.set(kinds(resourceGroupMapping), error.message);
        }
      }
      reports.push(syncReport(sync, group));
    }
  }
  for (const [what, message] of refusals) warn(`cannot read ${what}: ${message}`);
  // Refused everything: there is no view, and an empty one would say "no syncs".
  if (listed === 0) return 1;
  write(render(reports, options.format, options));
  return exitCode(reports);
}

/**
 * Informers on RootSyncs and RepoSyncs (and ResourceGroups with --resources): every change redraws
 * the view, and only a view that differs from the last one is written. The first view waits until each
 * informer has listed, or been refused for good (403, 401: shown on stderr, and the kind left out); a
 * server that is down or failing is waited for, until Ctrl-C.
 */
async function watchStatus(client: KubeClient, options: StatusOptions, write: (text: string) => void): Promise<number> {
  let settle = (): void => undefined;
  const informer = (mapping: ResourceMapping): Informer => {
    // Retried with backoff for as long as the watch runs: the same failure again is not said again.
    let said: string | undefined;
    return new Informer(client, mapping, {
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      onError: (error: Error) => {
        const notServed = isNotFound(error) ? unreadable(error, mapping) : undefined;
        const message =
          notServed === undefined ? `watch: ${error.message}` : `cannot read ${kinds(mapping)}: ${notServed}`;
        if (message !== said) warn(message);
        said = message;
        settle();
      },
    });
  };
  const syncs = syncMappings.map(informer);
  const groups = options.resources ? informer(resourceGroupMapping) : undefined;
  const informers = groups === undefined ? syncs : [...syncs, groups];
  let last = "";
  let code = 0;
  let pending: NodeJS.Immediate | undefined;
  let drawn = false;
  const draw = (): void => {
    pending = undefined;
    if (!drawn) return;
    const reports = syncs.flatMap((informer) =>
      named(sorted(informer.list()), options.name).map((sync) =>
        syncReport(
          sync,
          groups?.hasSynced === true
            ? (groups.get(sync.metadata.namespace, sync.metadata.name) ?? emptyGroup)
            : undefined,
        ),
      ),
    );
    code = exitCode(reports);
    const view =
      options.format === OutputFormat.Json
        ? `${printableJson(JSON.stringify({ syncs: reports }))}\n`
        : render(reports, options.format, options);
    if (view === last) return;
    last = view;
    if (options.format === OutputFormat.Text && options.tty === true) write("\x1b[H\x1b[2J");
    write(options.format === OutputFormat.Yaml ? `---\n${view}` : view);
  };
  // Changes arrive in bursts (a status write per phase): one redraw per turn of the event loop.
  const schedule = (): void => void (pending ??= setImmediate(draw));
  const settled = (i: Informer): boolean => i.hasSynced || isRefusal(i.lastError) || isNotFound(i.lastError);
  const ready = new Promise<void>((resolve) => {
    settle = () => {
      if (informers.every(settled)) resolve();
    };
  });
  for (const informer of informers) {
    for (const event of ["add", "update", "delete"] as const) informer.on(event, schedule);
    informer.synced().then(settle, () => undefined);
    informer.start();
  }
  try {
    // Ctrl-C wins over a first list that never comes (the server down, or failing).
    if (!(await Promise.race([ready.then(() => true), aborted(options.signal).then(() => false)])))
      return interruptedExitCode;
    if (!syncs.some((i) => i.hasSynced)) return 1; // every kind refused: said on stderr
    drawn = true;
    draw();
    await aborted(options.signal);
    return code;
  } finally {
    if (pending !== undefined) clearImmediate(pending);
    await Promise.all(informers.map((i) => i.stop()));
  }
}
