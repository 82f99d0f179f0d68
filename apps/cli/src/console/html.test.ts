import { test } from "node:test";
import assert from "node:assert/strict";
import { syncReport } from "../sync-report.ts";
import { html } from "./html.ts";
import { overviewLive, overviewQuery } from "./overview-view.ts";
import { syncLive } from "./sync-view.ts";

const hostile = `<script>alert(1)</script>"'&`;

test("the html template escapes every interpolated string, and passes only Html through", () => {
  const inner = html`<b>${hostile}</b>`;
  assert.equal(inner.text, "<b>&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;</b>");
  assert.equal(html`<p title="${hostile}">${inner}</p>`.text.includes("<script>"), false);
  assert.equal(
    html`${[hostile, 1, undefined, false, null]}`.text,
    "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;1",
  );
});

const sync = {
  apiVersion: "configsync.gke.io/v1beta1",
  kind: "RepoSync",
  metadata: { name: `evil${hostile}`, namespace: "team-a", annotations: { "driftless.dev/suspend": "true" } },
  spec: { sourceType: "git", git: { repo: `https://user:pw@git.example/${hostile}`, branch: "main", dir: hostile } },
  status: {
    conditions: [
      {
        type: "Syncing",
        status: "False",
        reason: "Source",
        message: hostile,
        errorSourceRefs: ["status.source.errors"],
        errorSummary: { totalCount: 1 },
      },
      { type: "Suspended", status: "True", reason: "Suspended", message: `drift ${hostile}` },
    ],
    source: {
      commit: "abc",
      errors: [{ code: "1006", errorMessage: `KNV1006: bad file ${hostile}` }],
      errorSummary: { totalCount: 1 },
    },
  },
};
const group = {
  apiVersion: "kpt.dev/v1alpha1",
  kind: "ResourceGroup",
  metadata: { name: "evil", namespace: "team-a" },
  status: {
    resourceStatuses: [{ group: "", kind: "ConfigMap", namespace: "team-a", name: hostile, status: "Current" }],
  },
};

test("a hostile sync name, source, message, error and object name render as text on the overview and the sync's page", () => {
  const report = syncReport(sync, group);
  const overview = overviewLive(
    { reports: [report], refusals: [], loading: false },
    overviewQuery(new URLSearchParams()),
  ).text;
  const detail = syncLive({
    ref: { kind: "RepoSync", namespace: "team-a", name: sync.metadata.name },
    sync,
    report,
    syncState: { synced: true },
    groupState: { synced: true },
    events: [{ apiVersion: "v1", kind: "Event", metadata: { name: "e" }, message: hostile, reason: hostile } as never],
    eventState: { synced: true },
    pods: [],
    podState: { synced: true, error: hostile },
    reconcilerName: "ns-reconciler-team-a",
    csrf: "token",
    objectsPage: 1,
  }).text;
  for (const text of [overview, detail]) {
    assert.equal(text.includes("<script>"), false, text);
    assert.match(text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.equal(text.includes("pw@"), false, "credentials masked");
  }
  assert.match(detail, /KNV1006/);
  assert.match(detail, /What to do:/);
  assert.match(detail, /Resume/);
});
