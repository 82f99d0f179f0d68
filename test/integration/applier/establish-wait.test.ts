/**
 * The applier's wait for new CRDs to be Established (60 s by default) ends when the reconciler stops, so a
 * SIGTERM during it exits inside the Pod's grace instead of holding the pass until the wait runs out.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitForEstablished } from "@driftless/applier";
import type { KubeObject } from "@driftless/kube";
import { suffix } from "../../support/index.ts";
import { adminClient, crds } from "../kube/support.ts";

/** A namespaced CRD of `group` named by its plural, whose kind may repeat another's (then never Established). */
function crd(group: string, plural: string, kind: string): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, plural, singular: plural.slice(0, -1), listKind: `${kind}List` },
      scope: "Namespaced",
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }],
    },
  };
}

test("a stop ends the wait for CRDs to be Established, with those Established so far; one whose names are refused is not waited for", async (t) => {
  const client = await adminClient(t);
  const group = `establish${suffix()}.example.com`;
  const accepted = `widgets.${group}`;
  // Same kind as the first: the API server refuses its names (KindConflict), so it is never Established.
  const conflicting = `gizmos.${group}`;
  // Registered first: a create that fails after the other succeeded leaves no CRD behind.
  t.after(async () => {
    for (const name of [accepted, conflicting]) await client.delete(crds, undefined, name).catch(() => undefined);
  });
  await client.create(crds, crd(group, "widgets", "Widget"));
  await client.create(crds, crd(group, "gizmos", "Widget"));
  // The first is Established once its names are accepted.
  const [first] = await waitForEstablished(client, [accepted], 30_000);
  assert.equal(first?.metadata?.name, accepted);

  // Its names refused, the second is Failed to kstatus: not waited for (as cli-utils' wait ends), left out.
  const started = Date.now();
  const refused = await waitForEstablished(client, [accepted, conflicting], 60_000);
  assert.deepEqual(
    refused.map((c) => c.metadata?.name),
    [accepted],
  );
  assert.ok(Date.now() - started < 30_000, "the refused CRD was waited for");

  const stop = new AbortController();
  stop.abort();
  // A CRD not there yet: without the stop this waits the whole minute, then stalls the pass.
  const established = await waitForEstablished(client, [accepted, `absent.${group}`], 60_000, stop.signal);
  assert.deepEqual(
    established.map((c) => c.metadata?.name),
    [accepted],
  );
});
