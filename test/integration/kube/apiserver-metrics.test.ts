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
  // Writes to one object carry scope="resource". Whenever any namespace is deleted (other tests delete
  // theirs meanwhile) the namespace controller deletes every namespaced type's collection, with
  // scope="namespace"; those are not ours, so writes are counted at resource scope only.
  const writesAt = async (): Promise<number> => {
    const counts = await apiserverMetrics(client, { ...filter, scope: "resource" });
    return ["POST", "PUT", "PATCH", "APPLY", "DELETE"].reduce((sum, verb) => sum + (counts.byVerb[verb] ?? 0), 0);
  };

  const before = await writesAt();
  const writesBefore = client.requests.writes();
  await client.create(widgets, widget(widgets, ns, "w", 1));
  assert.equal(client.requests.writes() - writesBefore, 1);
  // The server counts a request when its handler returns, which may be just after we read the response.
  const afterCreate = await eventually(async () => ((await writesAt()) > before ? writesAt() : undefined), {
    timeoutMs: 5000,
    what: "the create to be counted",
  });
  assert.equal(afterCreate - before, 1, "the server counted a different number of writes than the one create");

  // A pass that only reads.
  const readsBefore = await apiserverMetrics(client, filter);
  await client.get(widgets, ns, "w");
  await client.list(widgets, { namespace: ns });
  const delta = (now: typeof readsBefore, verb: string): number =>
    (now.byVerb[verb] ?? 0) - (readsBefore.byVerb[verb] ?? 0);
  const afterReads = await eventually(
    async () => {
      const now = await apiserverMetrics(client, filter);
      return delta(now, "GET") >= 1 && delta(now, "LIST") >= 1 ? now : undefined;
    },
    { timeoutMs: 5000, what: "the reads to be counted" },
  );
  assert.equal(await writesAt(), afterCreate, "zero writes");
  assert.equal(delta(afterReads, "GET"), 1);
  // The garbage collector also lists new resource types, so LIST may count more than ours.
  assert.ok(delta(afterReads, "LIST") >= 1);
});
