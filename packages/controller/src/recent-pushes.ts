/**
 * Pushes already handled, by a digest of their signed body. A captured request stays valid forever
 * (GitHub and the generic form sign only the body; GitLab and registries send the secret itself), so a
 * replay is answered without queueing anything. Delivery-id headers are not signed, so they cannot
 * serve as the key. Bounded in count and age: a legitimate identical push later (a branch moved back)
 * is acted on once the entry expires, and polling catches it up meanwhile.
 */
import { createHash } from "node:crypto";

export interface RecentPushesOptions {
  /** How long a handled push is remembered. */
  readonly ttlMs: number;
  /** At most this many remembered; the oldest go first. */
  readonly capacity: number;
  readonly now?: () => number;
}

export const DefaultRecentPushes: RecentPushesOptions = { ttlMs: 10 * 60_000, capacity: 4096 };

export class RecentPushes {
  readonly #ttlMs: number;
  readonly #capacity: number;
  readonly #now: () => number;
  /** Digest → when it expires; a Map iterates in insertion order, so the first entry is the oldest. */
  readonly #expiries = new Map<string, number>();

  constructor(options: RecentPushesOptions = DefaultRecentPushes) {
    this.#ttlMs = options.ttlMs;
    this.#capacity = options.capacity;
    this.#now = options.now ?? Date.now;
  }

  static keyOf(provider: string, body: Buffer): string {
    return createHash("sha256").update(provider).update("\0").update(body).digest("hex");
  }

  /** True when this push was handled within the TTL. */
  has(key: string): boolean {
    const expiry = this.#expiries.get(key);
    if (expiry === undefined) return false;
    if (expiry > this.#now()) return true;
    this.#expiries.delete(key);
    return false;
  }

  remember(key: string): void {
    this.#expiries.delete(key);
    this.#expiries.set(key, this.#now() + this.#ttlMs);
    for (const oldest of this.#expiries.keys()) {
      if (this.#expiries.size <= this.#capacity) break;
      this.#expiries.delete(oldest);
    }
  }
}
