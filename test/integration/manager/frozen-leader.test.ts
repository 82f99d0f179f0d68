/**
 * A frozen leader (SIGSTOP) keeps its IPC channels open, so its reconciler processes do not notice it is
 * gone; without heartbeats they ran beside the ones the new leader starts for the same sync: the old one's
 * remediator fought each new commit back (a false KNV2005) and undid an Orphan deletion's release.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { eventually, TestRepo } from "../../support/index.ts";
import {
  admin,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  newScope,
  reconcilerPids,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

const names = ["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"];
const managed = "configmanagement.gke.io/managed";

/** The running reconciler processes of `sync` that `manager` started. */
async function childrenOf(managerPid: number, scope: Parameters<typeof reconcilerPids>[0], sync: string) {
  const children: number[] = [];
  for (const pid of await reconcilerPids(scope, sync)) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    // Field 4, after the parenthesised command name (which may hold spaces).
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (ppid === managerPid) children.push(pid);
  }
  return children;
}

/** Checks `what` every 200 ms for `ms`: a state that must hold, not one to wait for. */
async function holds(ms: number, what: string, check: () => Promise<string | undefined>): Promise<void> {
  for (const started = Date.now(); Date.now() - started < ms; await delay(200)) {
    const broken = await check();
    assert.equal(broken, undefined, `${what}: broken ${Date.now() - started} ms in`);
  }
}

test("a frozen leader's reconcilers stop before the new leader's start: a new commit is not fought back, and an Orphan deletion's release stays, even after the thaw", async (t) => {
  const scope = await newScope(t);
  const a = await startManager(t, { scope, extraArgs: ["--identity", `${scope.id}-a`] });
  await eventually(() => a.isLeader(), { what: "the first replica leads" });
  const b = await startManager(t, { scope, extraArgs: ["--identity", `${scope.id}-b`] });
  const target = await createNamespace(t, "frozen");
  const repo = await TestRepo.create(t);
  for (const name of names) await repo.write(`root/${name}.yaml`, configMap(name, target, { v: "1" }));
  const v1 = await repo.commit("v1");
  const name = `frozen-${scope.id}`;
  await createSync(
    t,
    rootSyncObject(
      name,
      scope,
      { repo: repo.url, branch: repo.branch, dir: "root" },
      { "configsync.gke.io/deletion-propagation-policy": "Orphan" },
    ),
  );
  await synced("RootSync", systemNamespace, name, v1);
  const oldChildren = await childrenOf(a.pid, scope, name);
  assert.equal(oldChildren.length, 1, "the leader runs the sync's reconciler");

  const frozenAt = Date.now();
  a.process.kill("SIGSTOP");
  let thawed = false;
  const thaw = (): void => {
    if (!thawed) a.process.kill("SIGCONT");
    thawed = true;
  };
  try {
    await eventually(() => b.isLeader(), { timeoutMs: 40_000, what: "the standby takes over" });
    await eventually(async () => (await childrenOf(b.pid, scope, name)).length === 1, {
      timeoutMs: 60_000,
      what: "the new leader runs the sync's reconciler",
    });
    const besideNew = await childrenOf(a.pid, scope, name);
    t.diagnostic(`the new leader's reconciler ran ${Date.now() - frozenAt} ms after the freeze`);

    // (a) A new commit is synced and stays: no reconciler guards the old one.
    await repo.write("root/cm-0.yaml", configMap("cm-0", target, { v: "2" }));
    const v2 = await repo.commit("v2");
    await synced("RootSync", systemNamespace, name, v2);
    await holds(3_000, "cm-0 at v2, the sync without errors", async () => {
      const v = ((await getObject(Mapping.ConfigMap, target, "cm-0"))?.["data"] as { v?: string } | undefined)?.v;
      if (v !== "2") return `cm-0 at v${v}`;
      const errors = JSON.stringify((await getSync("RootSync", systemNamespace, name))?.["status"] ?? {});
      return errors.includes("KNV2005") ? `a fight reported: ${errors}` : undefined;
    });

    // (b) Deleted with Orphan: every object released, for good.
    const client = await admin();
    await client.delete(Mapping.RootSync, systemNamespace, name);
    await eventually(async () => (await getSync("RootSync", systemNamespace, name)) === undefined, {
      timeoutMs: 60_000,
      what: "the RootSync deleted",
    });
    const stillManaged = async (): Promise<string | undefined> => {
      const again: string[] = [];
      for (const cm of names)
        if ((await getObject(Mapping.ConfigMap, target, cm))?.metadata.annotations?.[managed] === "enabled")
          again.push(cm);
      return again.length === 0 ? undefined : `managed: ${again.join(", ")}`;
    };
    await holds(3_000, "every ConfigMap released", stillManaged);
    thaw();
    await Promise.race([a.exited, delay(30_000)]);
    await holds(3_000, "every ConfigMap released after the thaw", stillManaged);
    // Checked last, so that on a regression the symptoms above are what fails.
    assert.deepEqual(besideNew, [], "the frozen leader's reconciler still ran beside the new leader's");
  } finally {
    thaw();
  }
});
