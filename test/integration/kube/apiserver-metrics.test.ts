import assert from "node:assert/strict";
import { test } from "node:test";
import { apiserverMetrics } from "@driftless/kube";
import { eventually, testNamespace } from "../../support/index.ts";
import { adminClient, throwawayCrd, widget } from "./support.ts";

void test("apiserverMetrics counts our create as one write, and a read-only pass as none", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-metrics");
  // A resource of this test's own: no other client in the run writes it.
  const widgets = await throwawayCrd(t, client);
  const filter = { group: widgets.group, resource: widgets.resource };
  // The namespace controller sends DELETECOLLECTION for every namespaced type whenever any namespace is
  // deleted (other tests delete theirs meanwhile), so only the verbs a client of ours sends are compared.
  const ours = (counts: { byVerb: Readonly<Record<string, number>> }): number =>
    ["POST", "PUT", "PATCH", "APPLY", "DELETE"].reduce((sum, verb) => sum + (counts.byVerb[verb] ?? 0), 0);

  const before = await apiserverMetrics(client, filter);
  const writesBefore = client.requests.writes();
  await client.create(widgets, widget(widgets, ns, "w", 1));
  assert.equal(client.requests.writes() - writesBefore, 1);
  // The server counts a request when its handler returns, which may be just after we read the response.
  const afterCreate = await eventually(
    async () => {
      const now = await apiserverMetrics(client, filter);
      return ours(now) > ours(before) ? now : undefined;
    },
    { timeoutMs: 5000, what: "the create to be counted" },
  );
  // Under load the server has been seen to count more than the one POST our client sent (its own
  // accounting, not ours: the client's counter above says one). What must hold exactly is below.
  assert.ok(ours(afterCreate) - ours(before) >= 1);
  assert.ok((afterCreate.byVerb["POST"] ?? 0) - (before.byVerb["POST"] ?? 0) >= 1);
  // Wait until the server's count settles, so a late increment is not mistaken for a write below.
  let settled = afterCreate;
  await eventually(
    async () => {
      const now = await apiserverMetrics(client, filter);
      const stable = ours(now) === ours(settled);
      settled = now;
      return stable;
    },
    { timeoutMs: 10_000, intervalMs: 500, what: "the write count to settle" },
  );

  // A pass that only reads.
  await client.get(widgets, ns, "w");
  await client.list(widgets, { namespace: ns });
  const delta = (now: typeof before, verb: string): number => (now.byVerb[verb] ?? 0) - (settled.byVerb[verb] ?? 0);
  const afterReads = await eventually(
    async () => {
      const now = await apiserverMetrics(client, filter);
      return delta(now, "GET") >= 1 && delta(now, "LIST") >= 1 ? now : undefined;
    },
    { timeoutMs: 5000, what: "the reads to be counted" },
  );
  assert.equal(ours(afterReads), ours(settled), "zero writes");
  assert.equal(delta(afterReads, "GET"), 1);
  // The garbage collector also lists new resource types, so LIST may count more than ours.
  assert.ok(delta(afterReads, "LIST") >= 1);
});
