import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { Queue } from "bullmq";
import { syncQueueName } from "@driftless/queue";
import { eventually, suffix, testEnv, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  configMap,
  createNamespace,
  createSync,
  getObject,
  Mapping,
  repoSyncObject,
  startManager,
  synced,
  type RunningManager,
} from "./helpers.ts";

const secret = `secret-${suffix()}`;
const sign = (body: string, key = secret): string => `sha256=${createHmac("sha256", key).update(body).digest("hex")}`;

function post(manager: RunningManager, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`http://127.0.0.1:${manager.webhookPort}/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

function githubPush(repo: TestRepo, commit: string): string {
  return JSON.stringify({
    ref: `refs/heads/${repo.branch}`,
    after: commit,
    repository: { clone_url: repo.url, html_url: "https://example.invalid/x" },
  });
}

/** Every job the sync's queue has ever held (kept completed and failed ones included). */
/**
 * When the sync's newest job was created (0 without any): a count of jobs would not do, since the queue
 * keeps only its last few completed jobs and a new one can replace the oldest.
 */
async function newestJobAt(manager: RunningManager, namespace: string): Promise<number> {
  const queue = new Queue(syncQueueName({ kind: "RepoSync", namespace, name: "repo-sync" }), {
    connection: { url: testEnv().redisUrl },
    prefix: manager.scope.queuePrefix,
  });
  try {
    const jobs = await queue.getJobs(["completed", "failed", "waiting", "active", "delayed", "prioritized"]);
    return Math.max(0, ...jobs.map((job) => job.timestamp));
  } finally {
    await queue.close();
  }
}

test("a signed GitHub push gets a new commit synced long before the polling period; unsigned or wrongly signed pushes get 401 and do nothing", async (t) => {
  const manager = await startManager(t, { webhookSecret: secret });
  assert.ok(manager.webhookPort !== undefined);
  const namespace = await createNamespace(t, "hook");
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  const first = await repo.commit("v1");
  // Polling every 10 minutes: only the webhook can explain a fast sync.
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch, period: "10m" }),
  );
  await synced("RepoSync", namespace, "repo-sync", first);

  await repo.write("cm.yaml", configMap("a", undefined, { v: "2" }));
  const second = await repo.commit("v2");
  const body = githubPush(repo, second);
  const before = await newestJobAt(manager, namespace);
  const refused: Record<string, string>[] = [
    { "x-github-event": "push" },
    { "x-github-event": "push", "x-hub-signature-256": sign(body, "wrong-secret") },
    { "x-github-event": "push", "x-hub-signature-256": "sha256=00" },
  ];
  for (const headers of refused) {
    const response = await post(manager, body, headers);
    assert.equal(response.status, 401);
  }
  // An accepted push enqueues before it is answered, so this is final.
  assert.equal(await newestJobAt(manager, namespace), before, "a refused push enqueued a job");
  assert.match(
    await manager.metrics(),
    /driftless_webhook_requests_total\{provider="github",result="unauthorized"\} 3/,
  );

  const started = Date.now();
  const response = await post(manager, body, { "x-github-event": "push", "x-hub-signature-256": sign(body) });
  assert.equal(response.status, 202);
  assert.deepEqual(await response.json(), { status: "accepted" });
  await synced("RepoSync", namespace, "repo-sync", second, 30_000);
  const latency = Date.now() - started;
  t.diagnostic(`push to Synced: ${latency} ms (polling period 10 min)`);
  assert.ok(latency < 30_000);
  assert.deepEqual((await getObject(Mapping.ConfigMap, namespace, "a"))?.["data"], { v: "2" });
});

test("GitLab and generic signed pushes trigger the matching sync; other repositories and branches trigger nothing", async (t) => {
  const manager = await startManager(t, { webhookSecret: secret });
  const namespace = await createNamespace(t, "hook");
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch, period: "10m" }),
  );
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("v1"));

  // The answer never says how many syncs matched (it would tell which repositories tenants sync); the metric does.
  const other = JSON.stringify({ repo: "https://example.invalid/other.git", branch: repo.branch });
  assert.deepEqual(await (await post(manager, other, { "x-driftless-signature": sign(other) })).json(), {
    status: "accepted",
  });
  const otherBranch = JSON.stringify({ repo: repo.url, branch: "not-followed" });
  assert.deepEqual(await (await post(manager, otherBranch, { "x-driftless-signature": sign(otherBranch) })).json(), {
    status: "accepted",
  });
  assert.match(await manager.metrics(), /driftless_webhook_requests_total\{provider="generic",result="unmatched"\} 2/);

  await repo.write("cm.yaml", configMap("a", undefined, { v: "2" }));
  const second = await repo.commit("v2");
  const gitlab = JSON.stringify({
    object_kind: "push",
    ref: `refs/heads/${repo.branch}`,
    checkout_sha: second,
    project: { git_http_url: repo.url },
  });
  assert.equal((await post(manager, gitlab, { "x-gitlab-event": "Push Hook", "x-gitlab-token": "wrong" })).status, 401);
  const accepted = await post(manager, gitlab, { "x-gitlab-event": "Push Hook", "x-gitlab-token": secret });
  assert.deepEqual(await accepted.json(), { status: "accepted" });
  assert.match(await manager.metrics(), /driftless_webhook_requests_total\{provider="gitlab",result="matched"\} 1/);
  await synced("RepoSync", namespace, "repo-sync", second, 30_000);

  await repo.write("cm.yaml", configMap("a", undefined, { v: "3" }));
  const third = await repo.commit("v3");
  const generic = JSON.stringify({ repo: repo.url, branch: repo.branch, commit: third });
  assert.equal((await post(manager, generic, {})).status, 401);
  assert.equal((await post(manager, generic, { "x-driftless-signature": sign(generic) })).status, 202);
  await synced("RepoSync", namespace, "repo-sync", third, 30_000);
});

test("a sync with an unreadable spec.git.repo (%zz) is skipped and logged once; a push for another sync still gets 202 and its job", async (t) => {
  const manager = await startManager(t, { webhookSecret: secret });
  const namespace = await createNamespace(t, "hook");
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  // Created first, in the same namespace: the watch delivers it before the good sync it waits for.
  const bad = "https://127.0.0.1:1/%zz.git";
  await createSync(t, repoSyncObject(namespace, "bad-sync", manager.scope, { repo: bad, branch: repo.branch }));
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch, period: "10m" }),
  );
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("v1"));

  const before = await newestJobAt(manager, namespace);
  const push = JSON.stringify({ repo: repo.url, branch: repo.branch });
  for (let i = 0; i < 2; i++) {
    const response = await post(manager, push, { "x-driftless-signature": sign(push) });
    assert.equal(response.status, 202);
    assert.deepEqual(await response.json(), { status: "accepted" });
    // An accepted push has its job: a new one at once, or, when a pass was running, one BullMQ stores and
    // queues as that pass ends (keepLastIfActive). A second push may coalesce with the first.
    if (i === 0)
      await eventually(async () => (await newestJobAt(manager, namespace)) > before, {
        timeoutMs: 30_000,
        what: "the push's job",
      });
  }
  assert.match(await manager.metrics(), /driftless_webhook_requests_total\{provider="generic",result="matched"\} 2/);
  const warnings = manager.logs.filter((line) => line.includes("cannot be read as a URL") && line.includes("bad-sync"));
  assert.equal(warnings.length, 1, warnings.join("\n"));
});
