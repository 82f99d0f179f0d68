/**
 * A reconciler the manager cannot set up says why on its sync: a spec the API server would refuse
 * (requests above limits once the overrides add up) is Stalled at validation (KNV1061); a setup step
 * the API server refuses (a roleRef's namespace that does not exist, a Deployment a policy denies) is
 * Stalled with the server's message, and Reconciling stays True while the manager keeps at it. Once
 * the spec is fixed the sync syncs. Failed attempts add no Redis password to the sync's user.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { syncQueueName } from "@driftless/queue";
import { closeRedisConnection, createRedisConnection } from "@driftless/queue";
import type { KubeObject } from "@driftless/kube";
import { eventually, suffix, testEnv, TestRepo } from "../../support/index.ts";
import { denyByPolicy } from "../../support/admission-policy.ts";
import {
  admin,
  conditionOf,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  reconcilerPids,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

interface StalledCondition {
  status: string;
  reason?: string;
  message?: string;
  errors?: { code: string; errorMessage: string }[];
  errorSummary?: unknown;
}

async function stalledOf(name: string, timeoutMs = 30_000): Promise<{ sync: KubeObject; stalled: StalledCondition }> {
  return eventually(
    async () => {
      const sync = await getSync("RootSync", systemNamespace, name);
      const stalled = conditionOf(sync, "Stalled") as StalledCondition | undefined;
      return sync !== undefined && stalled?.status === "True" ? { sync, stalled } : undefined;
    },
    { timeoutMs, what: `RootSync ${name} Stalled` },
  );
}

test("a RootSync whose resource overrides add up to requests above limits is Stalled (KNV1061) naming the container and resource, and syncs once fixed", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "limits");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("limits", target, { v: "1" }));
  const commit = await repo.commit("one object");
  const name = `limits-${suffix()}`;
  await createSync(
    t,
    rootSyncObject(
      name,
      manager.scope,
      { repo: repo.url, branch: repo.branch },
      {},
      {
        resources: [
          {
            containerName: "reconciler",
            cpuRequest: "100m",
            cpuLimit: "200m",
            memoryRequest: "256Mi",
            memoryLimit: "512Mi",
          },
          { containerName: "git-sync", cpuRequest: "150m", memoryRequest: "300Mi" },
        ],
      },
    ),
  );
  const { sync, stalled } = await stalledOf(name);
  assert.equal(stalled.reason, "Validation");
  assert.match(stalled.message ?? "", /^2 error\(s\)\n\n\n\[1\] KNV1061: /);
  // The reconciler it would run, as Config Sync names it on status even while refused.
  assert.equal((sync["status"] as { reconciler?: string } | undefined)?.reconciler, `root-reconciler-${name}`);
  assert.match(stalled.message ?? "", /reconciler container's cpu request 250m exceeds its limit 200m/);
  assert.match(stalled.message ?? "", /reconciler container's memory request 556Mi exceeds its limit 512Mi/);
  assert.deepEqual(await reconcilerPids(manager.scope, name), [], "a reconciler runs for a refused spec");

  // Fixed: the limits cover the sum.
  await (
    await admin()
  ).patch(
    Mapping.RootSync,
    systemNamespace,
    name,
    {
      spec: {
        override: {
          resources: [
            {
              containerName: "reconciler",
              cpuRequest: "100m",
              cpuLimit: "400m",
              memoryRequest: "256Mi",
              memoryLimit: "1Gi",
            },
            { containerName: "git-sync", cpuRequest: "150m", memoryRequest: "300Mi" },
          ],
        },
      },
    },
    "merge",
  );
  await synced("RootSync", systemNamespace, name, commit, 90_000);
  assert.equal(conditionOf(await getSync("RootSync", systemNamespace, name), "Stalled")?.status, "False");
  assert.ok(await getObject(Mapping.ConfigMap, target, "limits"));
});

test("a RootSync whose roleRefs name a namespace that does not exist is Stalled with the API server's message, Reconciling, and syncs once fixed", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "roleref");
  const missing = `missing-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("roleref", target, { v: "1" }));
  const commit = await repo.commit("one object");
  const name = `roleref-${suffix()}`;
  await createSync(
    t,
    rootSyncObject(
      name,
      manager.scope,
      { repo: repo.url, branch: repo.branch },
      {},
      { roleRefs: [{ kind: "ClusterRole", name: "edit", namespace: missing }] },
    ),
  );
  const { sync, stalled } = await stalledOf(name);
  // Config Sync's reasons: the refused object's kind, and the stage for Reconciling.
  assert.equal(stalled.reason, "RoleBinding");
  assert.match(stalled.message ?? "", new RegExp(`namespaces "${missing}" not found`));
  // Config Sync's SetStalled: the error's text (here led by its code), no errors list, a summary of one.
  assert.match(stalled.message ?? "", /^KNV2\d{3}: /, JSON.stringify(stalled));
  assert.equal(stalled.errors, undefined);
  assert.deepEqual(stalled.errorSummary, { totalCount: 1, errorCountAfterTruncation: 1 });
  assert.equal(conditionOf(sync, "Reconciling")?.status, "True", "Reconciling while the manager keeps at it");
  assert.deepEqual(
    [conditionOf(sync, "Reconciling")?.reason, conditionOf(sync, "Reconciling")?.message],
    ["Setup", "Setup stalled"],
  );
  assert.deepEqual(await reconcilerPids(manager.scope, name), []);

  // Fixed: no roleRefs, so the reconciler is cluster-admin as Config Sync's.
  await (
    await admin()
  ).patch(Mapping.RootSync, systemNamespace, name, { spec: { override: { roleRefs: null } } }, "merge");
  await synced("RootSync", systemNamespace, name, commit, 90_000);
  assert.equal(conditionOf(await getSync("RootSync", systemNamespace, name), "Stalled")?.status, "False");
});

test("deployment mode: a reconciler Deployment the API server refuses is Stalled with its message, and repeated failed attempts add no Redis passwords", async (t) => {
  // A resync every second: one more failed attempt per second.
  const manager = await startManager(t, { mode: "deployment", extraArgs: ["--resync-period", "1"] });
  const client = await admin();
  const name = `refused-${suffix()}`;
  const reconciler = `root-reconciler-${name}`;
  const denial = `policy ${name}: no Deployment ${reconciler}`;
  const lift = await denyByPolicy(t, name, {
    rule: { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"] },
    when: `object.metadata.name == '${reconciler}'`,
    message: denial,
  });
  const probe = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: reconciler, namespace: systemNamespace },
    spec: {
      selector: { matchLabels: { probe: name } },
      template: { metadata: { labels: { probe: name } }, spec: { containers: [{ name: "c", image: "none" }] } },
    },
  } as KubeObject;
  await eventually(
    async () => {
      try {
        await client.create(Mapping.Deployment, probe, { dryRun: true });
        return false;
      } catch (error) {
        return String(error).includes(denial);
      }
    },
    { what: "the admission policy to be in force" },
  );
  await createSync(t, rootSyncObject(name, manager.scope, { repo: "https://example.invalid/c.git", branch: "main" }));

  const failures = (): number =>
    manager.logs.filter((l) => l.includes("manager job failed") && l.includes(reconciler)).length;
  await eventually(() => failures() >= 5, { timeoutMs: 60_000, what: "five failed attempts" });
  const redis = createRedisConnection(testEnv().redisUrl, { role: "worker", log: () => undefined });
  t.after(() => closeRedisConnection(redis));
  const user = `${manager.scope.queuePrefix}:${syncQueueName({ kind: "RootSync", namespace: systemNamespace, name })}`;
  const passwords = async (): Promise<number> => {
    const reply = (await redis.call("ACL", "GETUSER", user)) as unknown[] | null;
    if (reply === null) return 0;
    const list = reply[reply.indexOf("passwords") + 1];
    return Array.isArray(list) ? list.length : 0;
  };
  assert.ok(
    (await passwords()) <= 1,
    `${failures()} failed attempts left ${await passwords()} passwords on the sync's Redis user`,
  );

  const { stalled } = await stalledOf(name);
  assert.equal(stalled.reason, "Deployment");
  assert.ok((stalled.message ?? "").includes(denial), `the condition does not carry the refusal: ${stalled.message}`);
  assert.equal(conditionOf(await getSync("RootSync", systemNamespace, name), "Reconciling")?.status, "True");

  // The policy goes: the Deployment is created with the password already on the user, and Stalled clears.
  await lift();
  await eventually(() => getObject(Mapping.Deployment, systemNamespace, reconciler), {
    timeoutMs: 30_000,
    what: `Deployment ${reconciler}`,
  });
  await eventually(
    async () => conditionOf(await getSync("RootSync", systemNamespace, name), "Stalled")?.status === "False",
    { timeoutMs: 30_000, what: "Stalled cleared" },
  );
  assert.equal(await passwords(), 1);
});
