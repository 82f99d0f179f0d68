/** The page around every view: header, the live region the script refreshes, and shared fragments. */
import type { SyncState } from "../sync-report.ts";
import type { SyncRef } from "../sync-objects.ts";
import { html, type Html } from "./html.ts";

export interface PageOptions {
  /** The secret path prefix every link is relative to (`/s/<secret>/`). */
  readonly base: string;
  readonly title: string;
  /** The view's address; the script follows its changes at /live?view=... */
  readonly view: string;
  readonly csrf: string;
  /** Above the live region (filters, headings): not replaced by updates, so focus and input stay. */
  readonly top?: Html;
  readonly live: Html;
  /** The answer to a form posted without script (the script shows it without reloading). */
  readonly notice?: Html;
}

export function page(options: PageOptions): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <base href="${options.base}" />
        <title>${options.title} - driftless console</title>
        <!-- An icon of its own: the browser's default /favicon.ico, outside the secret prefix, is refused. -->
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="${link("/static/console.css")}" />
        <script src="${link("/static/console.js")}" defer></script>
      </head>
      <body data-live="${link(`/live?view=${encodeURIComponent(options.view)}`)}" data-csrf="${options.csrf}">
        <a class="skip" href="#main">Skip to content</a>
        <header class="bar">
          <a class="brand" href="${link("/")}">driftless console</a>
          <span id="live-status" class="live-status" role="status">Not live: reload to refresh</span>
        </header>
        <main id="main">
          ${options.top}
          <div id="notice" role="status" aria-live="polite">${options.notice}</div>
          <div id="live">${options.live}</div>
        </main>
      </body>
    </html> `;
}

const stateGlyph: Readonly<Record<SyncState, Html>> = {
  SYNCED: html`&#10003;`,
  SYNCING: html`&#8635;`,
  PENDING: html`&#9675;`,
  ERROR: html`&#10007;`,
  STALLED: html`&#9888;`,
  RECONCILING: html`&#8635;`,
  SUSPENDED: html`&#8214;`,
};

/** A state as text with a glyph and a colour: the word alone carries the meaning. */
export function stateBadge(state: SyncState): Html {
  return html`<span class="state state-${state.toLowerCase()}"
    ><span aria-hidden="true">${stateGlyph[state]}</span> ${state}</span
  >`;
}

/**
 * A console path (`/syncs/...`) as a link relative to the page's <base>, the secret prefix: a path from
 * the root would leave the prefix, and with it the secret.
 */
export function link(path: string): string {
  return `.${path}`;
}

/** A sync's page, as the console routes it (`link` makes it an href). */
export function syncPath(ref: SyncRef): string {
  return `/syncs/${ref.kind.toLowerCase()}/${encodeURIComponent(ref.namespace)}/${encodeURIComponent(ref.name)}`;
}

/** `2025-01-02 03:04:05 UTC`, in a <time> element; "-" when unknown. */
export function time(iso: string): Html {
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return html`<span>-</span>`;
  const text = new Date(at)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " UTC");
  return html`<time datetime="${iso}">${text}</time>`;
}

/** The first 12 characters of a commit, the whole in a tooltip. */
export function commit(sha: string): Html {
  if (sha === "") return html`<span>-</span>`;
  return html`<code title="${sha}">${sha.slice(0, 12)}</code>`;
}

/** Page links for a list of `total` items shown `size` at a time. */
export function pager(
  total: number,
  current: number,
  size: number,
  href: (page: number) => string,
  label: string,
): Html {
  const pages = Math.max(1, Math.ceil(total / size));
  if (pages === 1) return html``;
  const first = (current - 1) * size + 1;
  const last = Math.min(total, current * size);
  return html`<nav class="pager" aria-label="${label}">
    ${current > 1 ? html`<a href="${href(current - 1)}" rel="prev">&larr; Previous</a>` : html`<span aria-disabled="true">&larr; Previous</span>`}
    <span>${first}&ndash;${last} of ${total} (page ${current} of ${pages})</span>
    ${current < pages ? html`<a href="${href(current + 1)}" rel="next">Next &rarr;</a>` : html`<span aria-disabled="true">Next &rarr;</span>`}
  </nav>`;
}

/** A watch the API server refused: its answer, since RBAC decides what one sees. */
export function refused(what: string, error: string | undefined): Html {
  if (error === undefined) return html``;
  return html`<p class="warning" role="alert"><strong>Cannot read ${what}:</strong> ${error}</p>`;
}
