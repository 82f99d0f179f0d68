/**
 * `driftless console` for a namespace tenant, whom RBAC refuses most of what the console watches
 * (RootSyncs, ResourceGroups, Events, the reconciler's pods): a refused watch is shown as refused at once,
 * and no page waits for it to list (it never will) before answering.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { createRepoSync, customApi, eventually, testEnv, testNamespace, TestRepo } from "../support/index.ts";
import { startConsole } from "../support/console.ts";
import { grantUserRepoSyncs } from "../support/rbac.ts";

/** What the console's server allows a page at most for the first list of a watch (server.ts, firstListMs). */
const firstListMs = 5_000;

function get(port: number, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host: `127.0.0.1:${port}` } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

test("a tenant refused RootSyncs, ResourceGroups, Events and pods gets each page at once, the refusals on it", async (t) => {
  const namespace = await testNamespace(t, "tenant");
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace },
      spec: { sourceFormat: "unstructured", git: { repo: "https://git.example/x.git", branch: "main", auth: "none" } },
    },
  });
  await grantUserRepoSyncs(namespace, ["get", "list", "watch"]);
  const console = await startConsole(t, "--kubeconfig", testEnv().userKubeconfig, "-n", namespace);
  const base = new URL(console.url).pathname;

  // Well before firstListMs: a page that waited for the refused watches would take all of it.
  const bound = firstListMs / 2;
  for (let load = 0; load < 2; load++) {
    const overview = await timed(() => get(console.port, base));
    assert.equal(overview.value.status, 200, overview.value.body);
    assert.ok(overview.ms < bound, `the overview took ${Math.round(overview.ms)} ms (load ${load + 1})`);
    assert.match(overview.value.body, new RegExp(`data-sync="RepoSync/${namespace}/repo-sync"`));
    assert.match(overview.value.body, /Cannot read RootSyncs:<\/strong>[^<]*forbidden/i);

    const detail = await timed(() => get(console.port, `${base}syncs/reposync/${namespace}/repo-sync`));
    assert.equal(detail.value.status, 200, detail.value.body);
    assert.ok(detail.ms < bound, `the sync's page took ${Math.round(detail.ms)} ms (load ${load + 1})`);
    assert.match(detail.value.body, /forbidden/i);
  }
});

test("a tenant's console says what it cannot show: a RootSync's page is 'not visible', not loading forever, and without -n it points to -n", async (t) => {
  const namespace = await testNamespace(t, "tenant");
  await grantUserRepoSyncs(namespace, ["get", "list", "watch"]);
  const scoped = await startConsole(t, "--kubeconfig", testEnv().userKubeconfig, "-n", namespace);
  const base = new URL(scoped.url).pathname;
  const rootSync = await get(scoped.port, `${base}syncs/rootsync/config-management-system/root-sync`);
  assert.equal(rootSync.status, 200, rootSync.body);
  assert.match(rootSync.body, /Cannot read RootSyncs:<\/strong>[^<]*forbidden/i);
  assert.match(rootSync.body, /not visible to you/);
  assert.doesNotMatch(rootSync.body, /Loading/);

  // Every namespace: refused; the page says how to see the namespace the tenant may read.
  const wide = await startConsole(t, "--kubeconfig", testEnv().userKubeconfig);
  const overview = await get(wide.port, new URL(wide.url).pathname);
  assert.equal(overview.status, 200, overview.body);
  assert.match(overview.body, /Cannot read RepoSyncs:<\/strong>[^<]*forbidden/i);
  assert.match(overview.body, /driftless console -n NAMESPACE/);
});

test("a sync that does not exist answers 404, saying it is not found, and its page is served again once it is created", async (t) => {
  const namespace = await testNamespace(t);
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig, "-n", namespace);
  const base = new URL(console.url).pathname;
  // Until the console's first list of syncs is in, the page answers 200 "Loading"; then 404.
  let missing = await get(console.port, `${base}syncs/reposync/${namespace}/repo-sync`);
  await eventually(async () => {
    missing = await get(console.port, `${base}syncs/reposync/${namespace}/repo-sync`);
    return missing.status === 404;
  });
  assert.equal(missing.status, 404, missing.body);
  assert.match(missing.body, new RegExp(`RepoSync ${namespace}/repo-sync not found`));
  const wrongKind = await get(console.port, `${base}syncs/deployment/${namespace}/repo-sync`);
  assert.equal(wrongKind.status, 404);

  await createRepoSync(namespace, await TestRepo.create(t));
  await eventually(
    async () => (await get(console.port, `${base}syncs/reposync/${namespace}/repo-sync`)).status === 200,
    {
      what: "the created sync's page",
    },
  );
});
