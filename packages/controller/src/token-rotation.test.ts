import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as flush } from "node:timers/promises";
import type { KubeRequest } from "@driftless/kube";
import { createLogger } from "@driftless/sync";
import { TokenRotation } from "./token-rotation.ts";

const quiet = createLogger({}, { write: () => undefined });

/** A TokenRequest endpoint that hands out token-1, token-2, ... valid for `lifetimeMs` of fake time. */
function fakeApi(lifetimeMs: number, fail: () => boolean = () => false) {
  const requests: KubeRequest[] = [];
  let issued = 0;
  return {
    requests,
    request: <T>(req: KubeRequest): Promise<T> => {
      requests.push(req);
      if (fail()) return Promise.reject(new Error("API server unavailable"));
      issued++;
      return Promise.resolve({
        status: { token: `token-${issued}`, expirationTimestamp: new Date(Date.now() + lifetimeMs).toISOString() },
      } as T);
    },
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await flush();
}

/** Token writes go through the thread pool: wait for the file (real I/O, no timers involved). */
async function fileBecomes(file: string, expected: string): Promise<void> {
  let content = "";
  for (let i = 0; i < 100_000 && content !== expected; i++) {
    await flush();
    content = await readFile(file, "utf8").catch(() => "");
  }
  assert.equal(content, expected);
}

test("writes a token at once, renews it at half its lifetime, retries sooner after a failure, and stops", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "token-rotation-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, "token");
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  let failing = false;
  const api = fakeApi(3_600_000, () => failing);
  const rotation = new TokenRotation({
    client: api,
    namespace: "config-management-system",
    serviceAccount: "ns-reconciler-a",
    file,
    seconds: 3600,
    log: quiet,
  });

  await rotation.renew();
  assert.equal(await readFile(file, "utf8"), "token-1");
  assert.equal((await stat(file)).mode & 0o777, 0o600, "a token must be readable by its owner only");
  assert.match(
    api.requests[0]?.path ?? "",
    /\/namespaces\/config-management-system\/serviceaccounts\/ns-reconciler-a\/token$/,
  );

  t.mock.timers.tick(1_799_000);
  await settle();
  assert.equal(await readFile(file, "utf8"), "token-1", "renewed before half its lifetime");
  failing = true;
  t.mock.timers.tick(1_000);
  await settle();
  assert.equal(await readFile(file, "utf8"), "token-1", "a failed renewal keeps the old, still valid token");
  failing = false;
  t.mock.timers.tick(30_000);
  await fileBecomes(file, "token-2"); // retried 30 s after the failure

  rotation.stop();
  const before = api.requests.length;
  t.mock.timers.tick(10 * 3_600_000);
  await settle();
  assert.equal(api.requests.length, before, "a stopped rotation mints no more tokens");
});
