/** What the unpack tests share: a scratch directory per test, and the refusal they expect. */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { OciFailureReason, OciFetchError } from "../errors.ts";

export async function scratch(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-unpack-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Rejects as an unsafe layer (KNV2004) whose message holds `fragment`. */
export async function refused(promise: Promise<unknown>, fragment: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof OciFetchError, String(error));
    assert.equal(error.reason, OciFailureReason.UnsafeLayer);
    assert.equal(error.code, "KNV2004");
    assert.ok(error.message.includes(fragment), error.message);
    return true;
  });
}
