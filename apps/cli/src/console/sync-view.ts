/** A sync's page: source, commits, errors with what to do, conditions, managed objects, events, reconciler. */
import { isSuspended, pendingSyncRequest, SyncAnnotation } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import { remedyFor } from "../error-remedies.ts";
import type { SyncRef } from "../sync-objects.ts";
import type { ResourceReport, SyncReport } from "../sync-report.ts";
import { html, type Html } from "./html.ts";
import { commit, link, pager, refused, stateBadge, syncPath, time } from "./layout.ts";
import type { WatchState } from "./watches.ts";

export const objectsPageSize = 200;
const eventsShown = 10;

export interface SyncViewData {
  readonly ref: SyncRef;
  /** undefined: not (or no longer) there, or not visible to this user. */
  readonly sync: KubeObject | undefined;
  readonly report: SyncReport | undefined;
  readonly syncState: WatchState;
  readonly groupState: WatchState;
  readonly events: readonly KubeObject[];
  readonly eventState: WatchState;
  readonly pods: readonly KubeObject[];
  readonly podState: WatchState;
  readonly reconcilerName: string;
  readonly csrf: string;
  /** Page of the managed objects list (1-based). */
  readonly objectsPage: number;
}

export function syncTop(ref: SyncRef): Html {
  return html`<nav class="crumbs" aria-label="Breadcrumb">
      <a href="${link("/")}">Syncs</a> / <span>${ref.namespace}</span>
    </nav>
    <h1><span class="kind">${ref.kind}</span> ${ref.namespace}/${ref.name}</h1>`;
}

export function syncLive(d: SyncViewData): Html {
  if (d.sync === undefined || d.report === undefined) {
    return html`${refused(`${d.ref.kind}s`, d.syncState.error)}
      <p class="empty">
        ${
          // A refused watch never lists: what it would have shown is not visible to this user.
          d.syncState.synced || d.syncState.error !== undefined
            ? `${d.ref.kind} ${d.ref.namespace}/${d.ref.name} not found (deleted, or not visible to you).`
            : "Loading..."
        }
      </p>`;
  }
  const r = d.report;
  return html`<section class="head" aria-label="State and actions">
      <p class="state-line">
        ${stateBadge(r.state)} ${r.message === undefined ? "" : html`<span class="message">${r.message}</span>`}
      </p>
      ${actions(d)}
    </section>
    ${r.stalled === undefined ? "" : html`<p class="warning" role="alert"><strong>Stalled (${r.stalled.reason}):</strong> ${r.stalled.message}</p>`}
    ${
      r.suspended === undefined
        ? ""
        : html`<section aria-labelledby="drift">
            <h2 id="drift">While suspended</h2>
            <p class="drift">${r.suspended.message}</p>
          </section>`
    }
    <div class="columns">${source(r)} ${commits(r, d.sync)}</div>
    ${errors(r)} ${objects(d)} ${conditions(r)} ${events(d)} ${reconciler(d)}`;
}

function actions(d: SyncViewData): Html {
  const suspended = isSuspended(d.sync?.metadata.annotations);
  const pending = pendingSyncRequest(d.sync?.metadata.annotations);
  const form = (action: string, label: string, hint: string): Html =>
    html`<form method="post" action="${link(`${syncPath(d.ref)}/${action}`)}" data-action="${action}">
      <input type="hidden" name="csrf" value="${d.csrf}" />
      <button type="submit" title="${hint}">${label}</button>
    </form>`;
  return html`<div class="actions" role="group" aria-label="Actions">
      ${form("sync", "Sync now", `Annotates the sync with ${SyncAnnotation.SyncRequestedAt}`)}
      ${suspended ? form("resume", "Resume", `Removes ${SyncAnnotation.Suspend}`) : form("suspend", "Suspend", `Sets ${SyncAnnotation.Suspend}: "true"`)}
    </div>
    ${pending === undefined ? "" : html`<p class="muted">Pass requested at ${time(pending)}; waiting for the reconciler.</p>`}`;
}

function source(r: SyncReport): Html {
  const s = r.source;
  const rows: [string, string | undefined][] = [
    ["Type", s.type],
    ["Repository", s.repo],
    ["Branch", s.branch],
    ["Revision", s.revision],
    ["Image", s.image],
    ["Chart", s.chart],
    ["Version", s.version],
    ["Directory", s.dir],
  ];
  return html`<section aria-labelledby="source">
    <h2 id="source">Source</h2>
    <p class="source">${s.display}</p>
    <dl>
      ${rows
        .filter(([, v]) => v !== undefined && v !== "")
        .map(
          ([k, v]) =>
            html`<dt>${k}</dt>
              <dd>${v}</dd>`,
        )}
    </dl>
  </section>`;
}

function commits(r: SyncReport, sync: KubeObject): Html {
  const handled = sync.metadata.annotations?.[SyncAnnotation.SyncRequestHandled];
  return html`<section aria-labelledby="commits">
    <h2 id="commits">Commits</h2>
    <dl>
      <dt>Source</dt>
      <dd>${commit(r.commits.source)}</dd>
      <dt>Rendering</dt>
      <dd>${commit(r.commits.rendering)}</dd>
      <dt>Sync</dt>
      <dd>${commit(r.commits.sync)}</dd>
      <dt>Last synced</dt>
      <dd>${commit(r.commits.lastSynced)}</dd>
      <dt>Last sync time</dt>
      <dd>${time(r.lastSyncTime)}</dd>
      ${
        handled === undefined
          ? ""
          : html`<dt>Last request answered</dt>
              <dd>${time(handled)}</dd>`
      }
    </dl>
  </section>`;
}

function errors(r: SyncReport): Html {
  return html`<section aria-labelledby="errors">
    <h2 id="errors">Errors (${r.errorCount})</h2>
    ${
      r.errors.length === 0
        ? html`<p class="empty">No errors.</p>`
        : html`${r.errorCount > r.errors.length ? html`<p class="muted">Status lists ${r.errors.length} of ${r.errorCount}.</p>` : ""}
            <ul class="errors">
              ${r.errors.map(
                (e) =>
                  html`<li class="error">
                    <p><strong class="code">${e.code || "error"}</strong> <span class="phase">${e.phase}</span></p>
                    <pre class="message">${e.message}</pre>
                    <p class="remedy"><strong>What to do:</strong> ${remedyFor(e.code, e.message)}</p>
                  </li>`,
              )}
            </ul>`
    }
  </section>`;
}

function objects(d: SyncViewData): Html {
  const list: readonly ResourceReport[] = d.report?.resources ?? [];
  const pages = Math.max(1, Math.ceil(list.length / objectsPageSize));
  const current = Math.min(Math.max(1, d.objectsPage), pages);
  const shown = list.slice((current - 1) * objectsPageSize, current * objectsPageSize);
  const notCurrent = list.filter((o) => o.status !== "Current").length;
  return html`<section aria-labelledby="objects">
    <h2 id="objects">Managed objects (${list.length}${notCurrent > 0 ? html`, ${notCurrent} not Current` : ""})</h2>
    ${refused("the ResourceGroup", d.groupState.error)}
    ${
      shown.length === 0
        ? html`<p class="empty">${d.groupState.synced ? "No managed objects recorded." : "Loading..."}</p>`
        : html`<table class="objects">
            <caption class="visually-hidden">
              Managed objects and their status
            </caption>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Namespace</th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              ${shown.map(
                (o) =>
                  html`<tr data-object="${o.kind}/${o.namespace}/${o.name}">
                    <td>${o.kind}${o.group === "" ? "" : html` <span class="muted">${o.group}</span>`}</td>
                    <td>${o.namespace || "-"}</td>
                    <td>${o.name}</td>
                    <td><span class="kstatus kstatus-${o.status.toLowerCase()}">${o.status}</span></td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${pager(list.length, current, objectsPageSize, (p) => link(`${syncPath(d.ref)}?objects=${p}`), "Pages of managed objects")}
  </section>`;
}

function conditions(r: SyncReport): Html {
  return html`<section aria-labelledby="conditions">
    <h2 id="conditions">Conditions</h2>
    ${
      r.conditions.length === 0
        ? html`<p class="empty">None yet.</p>`
        : html`<table>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Message</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              ${r.conditions.map(
                (c) =>
                  html`<tr>
                    <td>${c.type}</td>
                    <td>${c.status}</td>
                    <td>${c.reason}</td>
                    <td class="message">${c.message}</td>
                    <td>${time(c.lastUpdateTime)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}

interface RawEvent {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
}

function events(d: SyncViewData): Html {
  const when = (e: RawEvent): string => e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? "";
  const list = d.events
    .map((e) => e as unknown as RawEvent)
    .sort((a, b) => when(b).localeCompare(when(a)))
    .slice(0, eventsShown);
  return html`<section aria-labelledby="events">
    <h2 id="events">Recent events</h2>
    ${refused("Events", d.eventState.error)}
    ${
      list.length === 0
        ? html`<p class="empty">
            ${d.eventState.synced || d.eventState.error !== undefined ? "No events." : "Loading..."}
          </p>`
        : html`<table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Type</th>
                <th scope="col">Reason</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              ${list.map(
                (e) =>
                  html`<tr>
                    <td>${time(when(e))}</td>
                    <td>${e.type === "Warning" ? html`<strong>Warning</strong>` : (e.type ?? "")}</td>
                    <td>${e.reason ?? ""}</td>
                    <td class="message">
                      ${e.message ?? ""}${(e.count ?? 1) > 1 ? html` <span class="muted">(x${e.count ?? 1})</span>` : ""}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}

interface RawPod {
  status?: { phase?: string; containerStatuses?: { name?: string; ready?: boolean; restartCount?: number }[] };
}

function reconciler(d: SyncViewData): Html {
  const reconciling = d.report?.conditions.find((c) => c.type === "Reconciling");
  const mode = reconciling?.reason ?? "";
  return html`<section aria-labelledby="reconciler">
    <h2 id="reconciler">Reconciler</h2>
    <dl>
      <dt>Name</dt>
      <dd>
        <code>${d.reconcilerName}</code
        >${mode === "Deployment" ? " (Deployment in config-management-system)" : mode === "Process" ? " (process of the manager)" : ""}
      </dd>
      ${
        // Cleared once the reconciler runs (False, no message), as Config Sync's manager leaves it.
        reconciling?.message === undefined || reconciling.message === ""
          ? ""
          : html`<dt>Reported</dt>
              <dd>${reconciling.message}</dd>`
      }
    </dl>
    ${
      d.podState.error !== undefined
        ? html`<p class="muted">Pods not visible to you: ${d.podState.error}</p>`
        : d.pods.length === 0
          ? html`<p class="muted">
              ${d.podState.synced ? "No reconciler pod (a process of the manager, or not running)." : "Loading..."}
            </p>`
          : html`<table>
              <thead>
                <tr>
                  <th scope="col">Pod</th>
                  <th scope="col">Phase</th>
                  <th scope="col">Containers ready</th>
                  <th scope="col">Restarts</th>
                </tr>
              </thead>
              <tbody>
                ${d.pods.map((p) => {
                  const status = (p as unknown as RawPod).status;
                  const containers = status?.containerStatuses ?? [];
                  return html`<tr>
                    <td>${p.metadata.name}</td>
                    <td>${status?.phase ?? "Unknown"}</td>
                    <td>${containers.filter((c) => c.ready === true).length}/${containers.length}</td>
                    <td>${containers.reduce((n, c) => n + (c.restartCount ?? 0), 0)}</td>
                  </tr>`;
                })}
              </tbody>
            </table>`
    }
  </section>`;
}
