/** The overview: every sync the user may list, filtered by namespace, state and name, a page at a time. */
import { SyncState, type SyncReport } from "../sync-report.ts";
import { html, type Html } from "./html.ts";
import { commit, link, pager, refused, stateBadge, syncPath, time } from "./layout.ts";

export const overviewPageSize = 100;

export interface OverviewQuery {
  readonly namespace: string;
  readonly state: string;
  /** A part of the name (or namespace/name) to look for. */
  readonly q: string;
  readonly page: number;
}

export function overviewQuery(params: URLSearchParams): OverviewQuery {
  const page = Number.parseInt(params.get("page") ?? "1", 10);
  return {
    namespace: params.get("namespace") ?? "",
    state: (params.get("state") ?? "").toUpperCase(),
    q: params.get("q") ?? "",
    page: Number.isFinite(page) && page > 0 ? page : 1,
  };
}

export function overviewHref(query: OverviewQuery, change: Partial<OverviewQuery> = {}): string {
  const q = { ...query, ...change };
  const params = new URLSearchParams();
  if (q.namespace !== "") params.set("namespace", q.namespace);
  if (q.state !== "") params.set("state", q.state);
  if (q.q !== "") params.set("q", q.q);
  if (q.page > 1) params.set("page", String(q.page));
  const text = params.toString();
  return link(text === "" ? "/" : `/?${text}`);
}

const states = Object.values(SyncState);

/** The filter form: outside the live region, so typing is never interrupted by an update. */
export function overviewFilters(query: OverviewQuery, namespaces: readonly string[]): Html {
  return html`<h1>Syncs</h1>
    <form class="filters" method="get" action="${link("/")}" role="search" aria-label="Filter syncs">
      <label
        >Namespace
        <select name="namespace">
          <option value="">All namespaces</option>
          ${namespaces.map((ns) => html`<option value="${ns}" ${ns === query.namespace ? html` selected` : ""}>${ns}</option>`)}
        </select></label
      >
      <label
        >State
        <select name="state">
          <option value="">Any state</option>
          ${states.map((s) => html`<option value="${s}" ${s === query.state ? html` selected` : ""}>${s}</option>`)}
        </select></label
      >
      <label>Name <input type="search" name="q" value="${query.q}" placeholder="name or namespace/name" /></label>
      <button type="submit">Filter</button>
      <a href="${link("/")}">Clear</a>
    </form>`;
}

export interface OverviewData {
  readonly reports: readonly SyncReport[];
  readonly refusals: readonly { readonly kind: string; readonly error: string | undefined }[];
  readonly loading: boolean;
  /** Listing RepoSyncs in every namespace was refused: a user whose RBAC covers some namespaces needs `-n`. */
  readonly suggestNamespace?: boolean;
  /** The namespaces of every sync now: the script adds those new since the page loaded to the filter. */
  readonly namespaces?: readonly string[];
}

export function selectReports(reports: readonly SyncReport[], query: OverviewQuery): SyncReport[] {
  const q = query.q.toLowerCase();
  return reports.filter(
    (r) =>
      (query.namespace === "" || r.namespace === query.namespace) &&
      (query.state === "" || r.state === query.state) &&
      (q === "" || `${r.namespace}/${r.name}`.toLowerCase().includes(q)),
  );
}

/** The live part: counts by state, the table of this page, the pager. */
export function overviewLive(data: OverviewData, query: OverviewQuery): Html {
  const inNamespace = data.reports.filter((r) => query.namespace === "" || r.namespace === query.namespace);
  const counts = states
    .map((s) => ({ state: s, count: inNamespace.filter((r) => r.state === s).length }))
    .filter((c) => c.count > 0);
  const selected = selectReports(data.reports, query);
  const pages = Math.max(1, Math.ceil(selected.length / overviewPageSize));
  const current = Math.min(query.page, pages);
  const shown = selected.slice((current - 1) * overviewPageSize, current * overviewPageSize);
  return html`${data.refusals.map((r) => refused(`${r.kind}s`, r.error))}
    <span id="namespaces" hidden data-namespaces="${(data.namespaces ?? []).join(" ")}"></span>
    ${
      data.suggestNamespace === true
        ? html`<p class="hint">
            You may not list syncs in every namespace: <code>driftless console -n NAMESPACE</code> shows the syncs of a
            namespace you may read.
          </p>`
        : ""
    }
    <p class="summary">
      ${inNamespace.length}
      sync${inNamespace.length === 1 ? "" : "s"}${
        counts.length === 0
          ? ""
          : html`:
            ${counts.map(
              (c, i) =>
                html`${i > 0 ? ", " : ""}<a href="${overviewHref(query, { state: c.state, page: 1 })}"
                    >${c.count} ${c.state}</a
                  >`,
            )}`
      }${data.loading ? html` <span class="muted">(loading&hellip;)</span>` : ""}
    </p>
    ${
      shown.length === 0
        ? html`<p class="empty">${data.loading ? "Loading syncs..." : "No sync matches."}</p>`
        : html`<table class="syncs">
            <caption class="visually-hidden">
              Syncs, ${selected.length} matching
            </caption>
            <thead>
              <tr>
                <th scope="col">State</th>
                <th scope="col">Sync</th>
                <th scope="col">Source</th>
                <th scope="col">Commit</th>
                <th scope="col">Last synced</th>
                <th scope="col">Errors</th>
              </tr>
            </thead>
            <tbody>
              ${shown.map(row)}
            </tbody>
          </table>`
    }
    ${pager(selected.length, current, overviewPageSize, (p) => overviewHref(query, { page: p }), "Pages of syncs")}`;
}

function row(r: SyncReport): Html {
  return html`<tr data-sync="${r.kind}/${r.namespace}/${r.name}" data-state="${r.state}">
    <td>${stateBadge(r.state)}</td>
    <td>
      <a href="${link(syncPath({ kind: r.kind as "RootSync" | "RepoSync", namespace: r.namespace, name: r.name }))}"
        >${r.namespace}/${r.name}</a
      >
      <span class="kind">${r.kind}</span>
    </td>
    <td class="source"><span class="source-type">${r.source.type}</span> ${r.source.display}</td>
    <td>${commit(r.commits.sync || r.commits.source)}</td>
    <td>${time(r.lastSyncTime)}</td>
    <td class="num">${r.errorCount > 0 ? html`<strong>${r.errorCount}</strong>` : "0"}</td>
  </tr>`;
}
