import { createHash } from "node:crypto";
import type { RSync } from "@driftless/api";

/**
 * A digest of what the reconciler was started for. When the spec changes the reconciler is
 * restarted (its poll period, for one, is read at start), and the Deployment's pod template
 * changes so its pods roll.
 */
export function specHash(sync: RSync, extra: Readonly<Record<string, unknown>> = {}): string {
  return createHash("sha256")
    .update(JSON.stringify({ spec: sync.spec, extra }))
    .digest("hex")
    .slice(0, 16);
}
