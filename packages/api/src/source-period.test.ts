import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pollPeriodMs } from "./poll-period.ts";
import { sourcePeriodOf } from "./source-period.ts";
import type { RootSyncSpec } from "./sync-types.ts";

const git = (period?: string): RootSyncSpec => ({
  sourceType: "git",
  git: { repo: "https://example.com/r.git", auth: "none", ...(period === undefined ? {} : { period }) },
});
const oci = (period?: string): RootSyncSpec => ({
  sourceType: "oci",
  oci: { image: "registry.example/config:v1", auth: "none", ...(period === undefined ? {} : { period }) },
});
const helm = (period?: string): RootSyncSpec => ({
  sourceType: "helm",
  helm: { repo: "https://charts.example", chart: "web", auth: "none", ...(period === undefined ? {} : { period }) },
});

/** Milliseconds between polls of a sync with this spec, as the reconciler computes them. */
const pollMs = (spec: RootSyncSpec): number => pollPeriodMs(sourcePeriodOf(spec));

void describe("sourcePeriodOf", () => {
  void it("reads the period of the sync's source type", () => {
    assert.equal(sourcePeriodOf(git("30s")), "30s");
    assert.equal(sourcePeriodOf(oci("2m")), "2m");
    assert.equal(sourcePeriodOf(helm("10m")), "10m");
  });

  void it("polls a chart hourly when helm.period is unset or zero, as Config Sync's GetPeriod does", () => {
    for (const zero of [undefined, "0", "0s", "0m0s", "0.0h"]) assert.equal(pollMs(helm(zero)), 3_600_000, zero);
  });

  void it("polls Git and OCI every 15 s when their period is unset or zero", () => {
    for (const zero of [undefined, "0", "0s", "0m0s"]) {
      assert.equal(pollMs(git(zero)), 15_000, zero);
      assert.equal(pollMs(oci(zero)), 15_000, zero);
    }
  });
});
