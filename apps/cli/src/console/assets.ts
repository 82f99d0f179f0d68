/**
 * The console's only style sheet and script, served from /static/ (the CSP allows no inline code).
 * Kept as strings so the bundled CLI (dist/driftless.mjs) carries them without files beside it.
 */

/** Follows the view's changes over server-sent events; posts the action forms without a reload. */
export const consoleScript = `"use strict";
(() => {
  const body = document.body;
  const live = document.getElementById("live");
  const status = document.getElementById("live-status");
  const notice = document.getElementById("notice");
  const setStatus = (text, state) => {
    if (!status) return;
    status.textContent = text;
    status.dataset.state = state;
  };
  // The filter sits outside the live region (typing is never interrupted): a namespace whose first sync
  // came after the page loaded is added to its choices, none removed (one may be selected).
  const addNamespaces = () => {
    const known = document.getElementById("namespaces");
    const select = document.querySelector('select[name="namespace"]');
    if (!known || !(select instanceof HTMLSelectElement)) return;
    const have = new Set(Array.from(select.options, (o) => o.value));
    for (const ns of (known.dataset.namespaces || "").split(" ")) {
      if (ns === "" || have.has(ns)) continue;
      const option = document.createElement("option");
      option.value = ns;
      option.textContent = ns;
      select.insertBefore(option, Array.from(select.options).find((o) => o.value !== "" && o.value > ns) || null);
    }
  };
  if (live && body.dataset.live) {
    const source = new EventSource(body.dataset.live);
    source.addEventListener("open", () => setStatus("Live", "live"));
    source.addEventListener("error", () => setStatus("Reconnecting...", "down"));
    source.addEventListener("view", (event) => {
      // The server escaped every value in this HTML; it is the same markup a reload would bring.
      live.innerHTML = event.data;
      addNamespaces();
      body.dataset.updated = String(Date.now());
    });
  }
  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.action) return;
    event.preventDefault();
    const button = form.querySelector("button");
    if (button) button.disabled = true;
    try {
      const response = await fetch(form.action, {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-Driftless-Csrf": body.dataset.csrf || "", "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(new FormData(form)).toString(),
      });
      if (notice) notice.innerHTML = await response.text();
    } catch (error) {
      if (notice) notice.textContent = "The console did not answer: " + String(error);
    } finally {
      if (button) button.disabled = false;
    }
  });
})();
`;

export const consoleStyle = `:root {
  --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --line: #d0d7de; --panel: #f6f8fa; --link: #0a58ca;
  --ok: #116329; --warn: #7d4e00; --bad: #a40e26; --info: #0550ae;
  font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; font-size: 15px; color: var(--fg); background: var(--bg);
}
body { margin: 0; }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible { outline: 3px solid #fb8c00; outline-offset: 2px; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 0.5rem; background: var(--bg); padding: 0.25rem 0.5rem; z-index: 2; }
.bar { display: flex; align-items: center; gap: 1rem; padding: 0.6rem 1.2rem; background: #24292f; color: #fff; }
.bar .brand { color: #fff; font-weight: 700; text-decoration: none; }
.live-status { margin-left: auto; font-size: 0.85rem; }
.live-status[data-state="live"]::before { content: "\\25CF  "; color: #3fb950; }
.live-status[data-state="down"]::before { content: "\\25CB  "; }
main { padding: 0.5rem 1.2rem 2rem; max-width: 1400px; }
h1 { font-size: 1.4rem; margin: 0.8rem 0; }
h2 { font-size: 1.1rem; margin: 1.2rem 0 0.5rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
.kind { font-size: 0.8rem; color: var(--muted); font-weight: 400; }
.filters { display: flex; flex-wrap: wrap; gap: 0.8rem; align-items: end; margin-bottom: 0.6rem; }
.filters label { display: flex; flex-direction: column; font-size: 0.85rem; gap: 0.2rem; }
select, input, button { font: inherit; padding: 0.25rem 0.5rem; }
button { border: 1px solid var(--line); border-radius: 6px; background: var(--panel); cursor: pointer; }
button:hover { background: #eaeef2; }
table { border-collapse: collapse; width: 100%; font-size: 0.92rem; }
th, td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
td.num { text-align: right; }
td.source, .source { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.85rem; word-break: break-all; }
.source-type { font-family: system-ui, sans-serif; font-size: 0.75rem; border: 1px solid var(--line); border-radius: 4px; padding: 0 0.3rem; color: var(--muted); }
.state { display: inline-block; font-weight: 700; font-size: 0.8rem; border: 1px solid currentColor; border-radius: 4px; padding: 0.05rem 0.4rem; white-space: nowrap; }
.state-synced { color: var(--ok); }
.state-syncing, .state-pending, .state-reconciling { color: var(--info); }
.state-error, .state-stalled { color: var(--bad); background: #fff5f5; }
.state-suspended { color: var(--warn); background: #fff8e6; }
.kstatus-current { color: var(--ok); }
.kstatus-failed, .kstatus-notfound { color: var(--bad); font-weight: 700; }
.kstatus-inprogress, .kstatus-terminating, .kstatus-unknown { color: var(--warn); font-weight: 700; }
.summary a { margin-right: 0.2rem; }
.muted { color: var(--muted); }
.empty { color: var(--muted); font-style: italic; }
.warning { border-left: 4px solid var(--bad); background: #fff5f5; padding: 0.5rem 0.8rem; }
.hint { border-left: 4px solid var(--info); background: #f0f6ff; padding: 0.5rem 0.8rem; }
#notice:not(:empty) { border-left: 4px solid var(--info); background: #f0f6ff; padding: 0.5rem 0.8rem; margin: 0.5rem 0; }
#notice .refused { color: var(--bad); }
.head { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; }
.state-line { margin: 0; flex: 1 1 20rem; }
.actions { display: flex; gap: 0.5rem; }
.actions form { margin: 0; }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 1.5rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; word-break: break-all; }
ul.errors { list-style: none; padding: 0; margin: 0; }
li.error { border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 4px; padding: 0.3rem 0.8rem; margin-bottom: 0.6rem; }
li.error p { margin: 0.3rem 0; }
pre.message { white-space: pre-wrap; word-break: break-word; margin: 0.3rem 0; font-size: 0.85rem; }
.code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.phase { color: var(--muted); }
td.message { word-break: break-word; }
.drift { background: #fff8e6; padding: 0.5rem 0.8rem; border-left: 4px solid var(--warn); }
.pager { display: flex; gap: 1rem; align-items: center; margin: 0.8rem 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.crumbs { margin-top: 0.6rem; font-size: 0.9rem; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
`;
