import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorClass, KnvCode } from "@driftless/api";
import { configMapMapping as mapping, Informer, KubeApiError, type ListWatchSource } from "@driftless/kube";
import { ListFailedError, untilListed, WatchRefusedError } from "./first-list.ts";

/** A hung API server: its lists are never answered (until the informer stops). */
const hung: ListWatchSource = {
  async *listPages(_m, opts) {
    await new Promise<void>((resolve) => opts.signal?.addEventListener("abort", () => resolve(), { once: true }));
    throw new Error("stopped");
  },
  watch: () => {
    throw new Error("no watch before a list");
  },
};

void describe("untilListed", () => {
  void it("a stop ends the wait for a first list the API server never answers", { timeout: 10_000 }, async (t) => {
    const informer = new Informer(hung, mapping, {});
    t.after(() => informer.stop());
    informer.start();
    const stopping = new AbortController();
    const waiting = untilListed(informer, mapping, 60_000, stopping.signal);
    stopping.abort();
    await assert.rejects(waiting, (e: unknown) => e instanceof ListFailedError && /stopping/.test(e.message));
  });
});

void describe("refusals", () => {
  void it("a type the reconciler may list but not watch (403) is a lasting refusal, as a refused list is: its pass is not retried with backoff", () => {
    const forbidden = new KubeApiError({
      status: 403,
      reason: "Forbidden",
      operation: "watch configmaps",
      serverMessage: 'configmaps is forbidden: cannot watch resource "configmaps"',
    });
    const watch = new WatchRefusedError(mapping, forbidden);
    assert.equal(watch.errorClass, ErrorClass.Terminal);
    assert.equal(watch.errorClass, new ListFailedError(mapping, forbidden).errorClass);
    assert.equal(watch.code, KnvCode.Apply);
  });
});
