/** What driftless_webhook_requests_total calls a webhook request's outcome: an accepted push splits by whether it matched. */
import { WebhookRequestResult } from "@driftless/metrics";
import { WebhookResult } from "./webhook-server.ts";

export function webhookRequestResult(result: WebhookResult, syncs: number | undefined): WebhookRequestResult {
  switch (result) {
    case WebhookResult.Accepted:
      return (syncs ?? 0) > 0 ? WebhookRequestResult.Matched : WebhookRequestResult.Unmatched;
    case WebhookResult.Ignored:
      return WebhookRequestResult.Ignored;
    case WebhookResult.Unauthorized:
      return WebhookRequestResult.Unauthorized;
    case WebhookResult.Invalid:
      return WebhookRequestResult.Invalid;
    case WebhookResult.Unavailable:
      return WebhookRequestResult.Unavailable;
    case WebhookResult.Incomplete:
      return WebhookRequestResult.Incomplete;
    case WebhookResult.Busy:
      return WebhookRequestResult.Busy;
  }
}
