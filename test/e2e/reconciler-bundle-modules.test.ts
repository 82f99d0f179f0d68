import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually, removeAfter } from "../support/index.ts";
import {
  buildReconcilerBundle,
  reconcilerBundle,
  stopBundledReconciler,
  syncedBundledReconciler,
} from "../support/bundled-reconciler.ts";

/** Loaded before the bundle: at exit, writes the built-in modules the process loaded to $MODULE_LIST_FILE. */
const recordModules = `data:text/javascript,${encodeURIComponent(
  'import { writeFileSync } from "node:fs"; process.on("exit", () => writeFileSync(process.env.MODULE_LIST_FILE, process.moduleLoadList.join("\\n")));',
)}`;

test("an idle reconciler from the bundle never loads undici (Node's fetch) nor carries BullMQ's PostgreSQL backend", async (t) => {
  buildReconcilerBundle();
  assert.ok(
    !(await readFile(reconcilerBundle, "utf8")).includes("BullMQ PostgreSQL backend"),
    "the bundle carries BullMQ's PostgreSQL SQL",
  );
  const moduleListDir = await mkdtemp(join(tmpdir(), "driftless-e2e-modules-"));
  removeAfter(t, moduleListDir);
  const moduleList = join(moduleListDir, "modules");
  const { reconciler } = await syncedBundledReconciler(t, {
    repoSync: { git: { period: "2s" } },
    nodeFlags: [`--import=${recordModules}`],
    args: ["--log-level=debug"],
    env: { MODULE_LIST_FILE: moduleList },
  });
  // Idle: polls that find the commit unchanged.
  const idlePolls = (): number => reconciler.output().split("poll: commit and spec unchanged").length - 1;
  await eventually(() => idlePolls() >= 2, { timeoutMs: 30_000, what: "two polls of the unchanged commit" });
  assert.equal(
    await stopBundledReconciler(reconciler),
    0,
    `the reconciler did not exit cleanly on SIGTERM: ${reconciler.output().slice(-2000)}`,
  );

  const loaded = (await readFile(moduleList, "utf8")).split("\n");
  // What it does load shows the list is the bundle's: it talks HTTP to the API server.
  assert.ok(loaded.includes("NativeModule http"), `node:http not in ${loaded.length} loaded modules`);
  // Node builds undici (~1.2 MiB of heap) only for fetch and the web socket classes, which driftless never uses.
  assert.ok(!loaded.includes("NativeModule internal/deps/undici/undici"), "undici was loaded");
});
