/**
 * The periodic poll (spec.git.period) as an in-process timer that enqueues `poll` triggers.
 *
 * Why not a BullMQ job scheduler (upsertJobScheduler)? A scheduler lives in Redis and outlives the
 * process, which is exactly wrong here: polling matters only while a reconciler runs to act on it,
 * and a scheduler left behind by a deleted sync (or by a teardown that failed half-way) keeps
 * enqueuing jobs nobody wants until someone cleans it up. An in-process timer dies with its
 * process, a restart starts a fresh one, and a changed period is just a new timer. De-duplication
 * makes an extra or early tick harmless; a missed tick is repaired by the next.
 */

export interface Poller {
  /** Stops further ticks. A tick already running finishes; nothing is scheduled after it. */
  stop(): void;
  readonly running: boolean;
}

export interface PollerOptions {
  readonly periodMs: number;
  /** One poll; the next is scheduled `periodMs` after it settles, so ticks never overlap. */
  readonly tick: () => Promise<unknown>;
  /** A failed tick (typically Redis unavailable) is reported here and polling carries on. */
  readonly onError: (error: unknown) => void;
  /** Tick once right away instead of after the first period. Default false. */
  readonly immediate?: boolean;
}

export function startPoller(options: PollerOptions): Poller {
  if (!Number.isFinite(options.periodMs) || options.periodMs <= 0)
    throw new RangeError(`poll period must be positive, got ${options.periodMs}`);
  let running = true;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (delayMs: number): void => {
    if (!running) return;
    timer = setTimeout(() => void run(), delayMs);
    // Polling alone must not keep a process alive: the worker (or the server) does that.
    timer.unref();
  };

  const run = async (): Promise<void> => {
    try {
      await options.tick();
    } catch (error) {
      options.onError(error);
    } finally {
      schedule(options.periodMs);
    }
  };

  schedule(options.immediate === true ? 0 : options.periodMs);
  return {
    stop(): void {
      running = false;
      clearTimeout(timer);
    },
    get running(): boolean {
      return running;
    },
  };
}
