import { test } from "node:test";
import assert from "node:assert/strict";
import { fitStatuses } from "./inventory-budget.ts";
import type { ResourceStatusEntry } from "./resource-status.ts";

const entry = (
  name: string,
  status = "Current",
  actuation: ResourceStatusEntry["actuation"] = "Succeeded",
): ResourceStatusEntry => ({
  group: "",
  kind: "ConfigMap",
  namespace: "ns",
  name,
  status,
  sourceHash: "abcdef0",
  strategy: "Apply",
  actuation,
  reconcile: actuation === "Succeeded" ? "Succeeded" : actuation,
});

test("keeps every status when they fit", () => {
  const all = [entry("b"), entry("a")];
  const { kept, omitted } = fitStatuses(all, 10_000);
  assert.equal(omitted, 0);
  assert.deepEqual(
    kept.map((e) => e.name),
    ["a", "b"],
  );
});

test("when statuses do not fit, keeps those that need attention first and reports how many were left out", () => {
  const healthy = Array.from({ length: 50 }, (_, i) => entry(`ok-${String(i).padStart(2, "0")}`));
  const failing = entry("zz-failed", "Unknown", "Failed");
  const pending = entry("zz-progress", "InProgress");
  const oneSize = JSON.stringify(healthy[0]).length + 1;
  const { kept, omitted } = fitStatuses([...healthy, failing, pending], oneSize * 5);
  assert.ok(
    kept.some((e) => e.name === "zz-failed") && kept.some((e) => e.name === "zz-progress"),
    "a failing object was dropped for a healthy one",
  );
  assert.equal(kept.length + omitted, 52);
  assert.ok(omitted >= 47);
  assert.deepEqual(
    kept.map((e) => e.name),
    [...kept.map((e) => e.name)].sort(),
    "not in id order",
  );
});
