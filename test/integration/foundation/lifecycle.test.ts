import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultCrdDir, down, isAlive, isHealthy, up } from "@driftless/local-cluster";
import { removeAfter } from "../../support/index.ts";

test("a second control plane starts, is idempotent, and stops leaving no etcd, kube-apiserver or kube-controller-manager", async (t) => {
  const stateDir = await mkdtemp(join(tmpdir(), "driftless-lifecycle-"));
  removeAfter(t, stateDir);
  const first = await up({ stateDir, crdDir: defaultCrdDir(), detached: false, quiet: true });
  try {
    assert.deepEqual(
      first.processes.map((p) => p.name),
      ["etcd", "kube-apiserver", "kube-controller-manager"],
    );
    assert.ok(await isHealthy(first));
    const again = await up({ stateDir, detached: false, quiet: true });
    assert.equal(again.server, first.server, "a second up started another control plane");
    assert.deepEqual(
      again.processes.map((p) => p.pid),
      first.processes.map((p) => p.pid),
    );
  } finally {
    const stopped = await down(stateDir);
    assert.equal(stopped.length, 3);
  }
  for (const p of first.processes) assert.equal(isAlive(p.pid), false, `${p.name} (${p.pid}) still running`);
  assert.deepEqual(await down(stateDir), [], "down of a stopped cluster must be a no-op");
});
