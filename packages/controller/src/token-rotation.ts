/**
 * Keeps a reconciler process's token file fresh: a token is minted for its ServiceAccount and
 * rewritten at half its lifetime, the way the kubelet refreshes a pod's projected token. The
 * child re-reads the file (every minute, and after a 401), so rotation never restarts it.
 */
import type { KubeClient } from "@driftless/kube";
import type { Logger } from "@driftless/sync";
import { mintToken, writeToken } from "./credentials.ts";

export interface TokenRotationOptions {
  readonly client: Pick<KubeClient, "request">;
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly file: string;
  /** Requested lifetime (the API server may shorten it). */
  readonly seconds: number;
  readonly log: Logger;
}

const retryMs = 30_000;

export class TokenRotation {
  readonly #o: TokenRotationOptions;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: TokenRotationOptions) {
    this.#o = options;
  }

  /** Writes a fresh token now (failing if it cannot), then keeps renewing it until stop(). */
  async renew(): Promise<void> {
    clearTimeout(this.#timer);
    await this.#renew();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #renew(): Promise<void> {
    const o = this.#o;
    const minted = await mintToken(o.client, o.namespace, o.serviceAccount, o.seconds);
    await writeToken(o.file, minted.token);
    this.#schedule(Math.max(retryMs, (minted.expiresAt.getTime() - Date.now()) / 2));
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#renew().catch((error: unknown) => {
        // The old token is still valid for the other half of its life: retry well before then.
        this.#o.log.warn("could not renew a reconciler token; retrying", {
          serviceAccount: this.#o.serviceAccount,
          error: String(error),
        });
        this.#schedule(retryMs);
      });
    }, ms);
    this.#timer.unref();
  }
}
