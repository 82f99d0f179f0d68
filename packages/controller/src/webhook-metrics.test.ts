import { test } from "node:test";
import assert from "node:assert/strict";
import { webhookRequestResult } from "./webhook-metrics.ts";
import { WebhookResult } from "./webhook-server.ts";

test("an accepted push counts as matched when it triggered a sync, unmatched when none follows it", () => {
  assert.equal(webhookRequestResult(WebhookResult.Accepted, 2), "matched");
  assert.equal(webhookRequestResult(WebhookResult.Accepted, 0), "unmatched");
  assert.equal(webhookRequestResult(WebhookResult.Unauthorized, undefined), "unauthorized");
  assert.equal(webhookRequestResult(WebhookResult.Busy, undefined), "busy");
});
