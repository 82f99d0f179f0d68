/**
 * driftless_kube_requests_total: the manager counts its own API requests by verb and resource, so what it
 * writes per sync can be told apart from every other client (the API server's counts mix them all).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "../../support/index.ts";
import {
  createNamespace,
  createSync,
  getObject,
  Mapping,
  repoSyncObject,
  startManager,
  systemNamespace,
} from "./helpers.ts";

const git = { repo: "https://example.invalid/config.git", branch: "main" };

/** The counter's value for one verb, resource and outcome in a /metrics answer (0 when it has no series). */
function requests(metrics: string, verb: string, resource: string, status = "success"): number {
  const series = `driftless_kube_requests_total{verb="${verb}",resource="${resource}",status="${status}"} `;
  const line = metrics.split("\n").find((l) => l.startsWith(series));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}

test("the manager counts its requests by verb, resource and outcome: a RepoSync's Deployment apply, its ServiceAccount, its lease", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const namespace = await createNamespace(t, "kube-requests");
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, git));
  const name = `ns-reconciler-${namespace}`;
  await eventually(() => getObject(Mapping.Deployment, systemNamespace, name), { what: `Deployment ${name}` });
  const metrics = await manager.metrics();
  assert.ok(requests(metrics, "patch", "deployments") >= 1, "the Deployment's server-side apply is not counted");
  assert.ok(requests(metrics, "create", "serviceaccounts") >= 1, "the ServiceAccount's create is not counted");
  // The first read of a new Lease is a 404: either outcome shows the lease client counted.
  const leaseReads = requests(metrics, "get", "leases") + requests(metrics, "get", "leases", "error");
  assert.ok(leaseReads >= 1, "the lease client's requests are not counted");
  assert.ok(requests(metrics, "watch", "reposyncs") >= 1, "the RepoSync watch is not counted");
  // The ServiceAccount is read before it exists: a 404, counted apart from the requests that did something.
  assert.ok(requests(metrics, "get", "serviceaccounts", "error") >= 1, "a request answered 404 is not an error");
});
