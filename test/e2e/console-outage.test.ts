/**
 * `driftless console` while its API server goes away and comes back (on a control plane of this file's
 * own, whose kube-apiserver the test kills and starts again): the page says it cannot read the syncs,
 * then, without a reload, stops saying so and follows the cluster again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { openSync } from "node:fs";
import type { Browser } from "playwright-core";
import { isHealthy, stopProcess } from "@driftless/local-cluster";
import { usePrivateControlPlane } from "../support/private-control-plane.ts";
import { createRepoSync, eventually, testEnv, testNamespace, TestRepo } from "../support/index.ts";
import { launchChromium } from "../support/browser.ts";
import { startConsole } from "../support/console.ts";

const { cluster } = await usePrivateControlPlane();

test("the console shows the API server's absence and, once it is back, drops the warning and follows the cluster without a reload", async (t) => {
  const namespace = await testNamespace(t);
  const later = await testNamespace(t, "later");
  const repo = await TestRepo.create(t);
  await createRepoSync(namespace, repo);
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig);
  const chromium: Browser = await launchChromium();
  t.after(() => chromium.close());
  const page = await (await chromium.newContext()).newPage();
  await page.goto(console.url);
  const row = (ns: string) => page.locator(`tr[data-sync="RepoSync/${ns}/repo-sync"]`);
  const warnings = page.locator("#live .warning");
  await row(namespace).waitFor();
  await eventually(async () => (await page.locator("#live-status").innerText()) === "Live", { what: "live" });
  let loads = 0;
  page.on("load", () => loads++);

  const apiserver = cluster.processes.find((p) => p.name === "kube-apiserver");
  assert.ok(apiserver !== undefined);
  process.kill(apiserver.pid, "SIGKILL");
  await warnings.first().waitFor({ timeout: 60_000 });
  assert.match(await warnings.first().innerText(), /Cannot read (RootSyncs|RepoSyncs)/);

  // The same kube-apiserver again, on the same port and etcd.
  const [binary, ...args] = apiserver.command;
  assert.ok(binary !== undefined);
  const restarted = spawn(binary, args, { stdio: ["ignore", openSync(apiserver.logFile, "a"), "ignore"] });
  t.after(() => (restarted.pid === undefined ? undefined : stopProcess(restarted.pid)));
  // isHealthy also asks that every recorded process live: the killed one is not coming back.
  const others = { ...cluster, processes: cluster.processes.filter((p) => p !== apiserver) };
  await eventually(() => isHealthy(others), { what: "the kube-apiserver back", timeoutMs: 60_000 });

  // The relist finds nothing changed: only the informer's recovery can clear the warning.
  await eventually(async () => (await warnings.count()) === 0, {
    what: "the warning gone without a reload",
    timeoutMs: 90_000,
  });
  await createRepoSync(later, repo);
  await row(later).waitFor({ timeout: 60_000 });
  assert.equal(loads, 0, "the page was updated in place, not reloaded");
});
