import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createLogger } from "@driftless/sync";
import { serveWebhooks } from "./webhook-server.ts";
import type { Push } from "./webhook-push.ts";

const secret = "top-secret";
const quiet = createLogger({}, { write: () => undefined });

test("only a verified push reaches onPush; the response says how many syncs it triggered", async (t) => {
  const pushes: Push[] = [];
  const results: string[] = [];
  let unavailable = false;
  const server = await serveWebhooks({
    port: 0,
    host: "127.0.0.1",
    secret,
    log: quiet,
    onResult: (_provider, result) => results.push(result),
    onPush: (push) => {
      if (unavailable) return Promise.reject(new Error("redis down"));
      pushes.push(push);
      return Promise.resolve(2);
    },
  });
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.port}/webhook`;
  const body = JSON.stringify({ repo: "https://example.invalid/r.git", branch: "main" });
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

  assert.equal((await fetch(url, { method: "POST", body })).status, 401);
  assert.equal(pushes.length, 0);
  const ok = await fetch(url, { method: "POST", body, headers: { "x-driftless-signature": signature } });
  assert.equal(ok.status, 202);
  assert.deepEqual(await ok.json(), { status: "accepted", syncs: 2 });
  assert.equal(pushes[0]?.branch, "main");

  assert.equal((await fetch(url)).status, 405);
  assert.equal((await fetch(`http://127.0.0.1:${server.port}/other`, { method: "POST", body })).status, 404);
  const huge = "x".repeat(1024 * 1024 + 1);
  assert.equal((await fetch(url, { method: "POST", body: huge })).status, 413);
  unavailable = true;
  assert.equal(
    (await fetch(url, { method: "POST", body, headers: { "x-driftless-signature": signature } })).status,
    503,
    "the sender should retry when the queue is down",
  );
  assert.deepEqual(results, ["unauthorized", "accepted", "invalid", "unavailable"]);
});
