/**
 * What the manager's watch caches hold (packages/controller/src/cached-forms.ts): with 1,000 syncs the
 * full reconciler Deployments were most of its live heap, so it watches them for metadata only. The
 * watch must still bring a Deployment deleted by hand back at once, long before the periodic resync.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { reconcilerName } from "@driftless/api";
import { eventually } from "../../support/index.ts";
import {
  admin,
  createNamespace,
  createSync,
  getObject,
  Mapping,
  newScope,
  repoSyncObject,
  startManager,
  systemNamespace,
} from "./helpers.ts";
import { startRecordingProxy, type ProxiedRequest } from "./recording-proxy.ts";

const git = { repo: "https://example.invalid/config.git", branch: "main" };
const deploymentsPath = `/apis/apps/v1/namespaces/${systemNamespace}/deployments`;
const byManager = (r: ProxiedRequest): boolean => r.userAgent.startsWith("driftless-manager/");

test("the manager lists and watches reconciler Deployments for their metadata only, and still re-creates one deleted by hand at once", async (t) => {
  const scope = await newScope(t);
  const proxy = await startRecordingProxy(t, scope.stateDir, "watch-cache");
  // The resync is an hour away: only the watch can bring the Deployment back within the wait below.
  await startManager(t, {
    scope,
    mode: "deployment",
    extraArgs: ["--kubeconfig", proxy.kubeconfig, "--resync-period", "3600"],
  });
  t.after(() => proxy.close());
  const namespace = await createNamespace(t, "watch-cache");
  await createSync(t, repoSyncObject(namespace, "repo-sync", scope, git));
  const name = reconcilerName("RepoSync", namespace, "repo-sync");
  const first = await eventually(() => getObject(Mapping.Deployment, systemNamespace, name), {
    what: `Deployment ${name}`,
  });

  // The informer's list and watch: the collection, not one Deployment by name (jobs read that in full).
  const collection = proxy.requests.filter((r) => byManager(r) && r.method === "GET" && r.path === deploymentsPath);
  assert.ok(
    collection.some((r) => /(^|&)watch=(1|true)/.test(r.query)),
    "no watch of the Deployments seen",
  );
  for (const r of collection)
    assert.match(r.accept, /as=PartialObjectMetadata/, `${r.path}?${r.query} asked for ${r.accept}`);

  const client = await admin();
  await client.delete(Mapping.Deployment, systemNamespace, name);
  const again = await eventually(
    async () => {
      const d = await getObject(Mapping.Deployment, systemNamespace, name);
      return d !== undefined && d.metadata.uid !== first.metadata.uid ? d : undefined;
    },
    { what: "the Deployment re-created from its delete event" },
  );
  assert.equal(again.metadata.labels?.["configsync.gke.io/sync-namespace"], namespace);
});
