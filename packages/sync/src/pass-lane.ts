import type { Logger } from "./log.ts";
import type { PassTrigger } from "./pass.ts";

/**
 * A sync's passes, one at a time whichever way they come: a job of its BullMQ queue, or a pass the
 * reconciler runs itself because the queue could not take one (Redis unavailable). Without this a pass
 * run here could overlap the job BullMQ hands the worker the moment Redis is back.
 */
export class PassLane {
  readonly #run: (trigger: PassTrigger) => Promise<void>;
  readonly #log: Logger;
  /** Settles when the last pass admitted so far has ended. */
  #tail: Promise<void> = Promise.resolve();
  /** The trigger of the in-process pass waiting its turn: one waits at most, as on the queue. */
  #waiting: PassTrigger | undefined;
  #bypassing = false;
  #closed = false;

  /** `run` is one pass, reported by itself (status, metrics, log): a failure here is already told. */
  constructor(run: (trigger: PassTrigger) => Promise<void>, log: Logger) {
    this.#run = run;
    this.#log = log;
  }

  /** True while passes run here because the queue could not take them. */
  get bypassingQueue(): boolean {
    return this.#bypassing;
  }

  /** Runs `work` once every pass admitted before it has ended. */
  serial<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(work);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** The queue could not take a pass: runs it here instead, folded into one already waiting. */
  runHere(trigger: PassTrigger, error: unknown): void {
    if (this.#closed) return;
    if (!this.#bypassing) {
      this.#bypassing = true;
      this.#log.warn("queue unavailable: running passes in this process until it is back", {
        trigger,
        error: error instanceof Error ? error.message : String(error),
      });
    }
    const alreadyWaiting = this.#waiting !== undefined;
    this.#waiting = trigger;
    if (alreadyWaiting) return;
    // Not awaited: the caller is a poll tick or a watch handler. The pass reported its own failure.
    this.serial(() => this.#runWaiting()).catch(() => undefined);
  }

  /** The queue took a pass again: from now on passes run through it. */
  queueTook(): void {
    if (!this.#bypassing) return;
    this.#bypassing = false;
    this.#log.info("queue available again: passes run through it", {});
  }

  /** No in-process pass starts from now on; resolves once the running pass (either way) has ended. */
  close(): Promise<void> {
    this.#closed = true;
    return this.#tail;
  }

  get closed(): boolean {
    return this.#closed;
  }

  async #runWaiting(): Promise<void> {
    const trigger = this.#waiting;
    this.#waiting = undefined;
    if (trigger === undefined || this.#closed) return;
    await this.#run(trigger);
  }
}
