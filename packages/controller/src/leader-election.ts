/**
 * Leader election on a `coordination.k8s.io/v1` Lease, the way client-go does it: the holder
 * renews the lease every retry period; another replica takes it over only after it has seen the
 * same record, unrenewed, for a whole lease duration by its own clock (so clock skew between
 * machines does not matter).
 *
 * Fenced: a leader may act only until its renew deadline, measured on the monotonic clock from
 * the start of its last successful renewal, which ends before anyone else may take over. `fence`
 * is checked right before every write (the manager's client calls it), so a leader that was frozen
 * or starved past its deadline steps down at its first attempt to write, without writing.
 */
import { setTimeout as delay } from "node:timers/promises";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { isAlreadyExists, isConflict, KubeClient, type KubeObject } from "@driftless/kube";
import type { Logger } from "@driftless/sync";
import { Resource } from "./resources.ts";

export interface LeaderElectionTimings {
  readonly leaseDurationMs: number;
  /** A leader that has not renewed for this long (since the start of its last renewal) stops acting. */
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Deadline of every API request, lease or not: a request must end before the renew deadline. */
  readonly requestTimeoutMs: number;
}

/**
 * Defaults, and the order fencing relies on: request timeout < renew deadline < lease duration.
 * The request timeout defaults to the smaller of half the renew deadline and the margin between
 * renew deadline and lease duration (5 s with client-go's 15/10/2).
 */
export function leaderElectionTimings(given: Partial<LeaderElectionTimings> = {}): LeaderElectionTimings {
  const leaseDurationMs = given.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = given.renewDeadlineMs ?? 10_000;
  const retryPeriodMs = given.retryPeriodMs ?? 2_000;
  const requestTimeoutMs = given.requestTimeoutMs ?? Math.min(renewDeadlineMs / 2, leaseDurationMs - renewDeadlineMs);
  if (!(renewDeadlineMs < leaseDurationMs))
    throw new RangeError(
      `the renew deadline (${renewDeadlineMs} ms) must be shorter than the lease (${leaseDurationMs} ms)`,
    );
  if (!(retryPeriodMs < renewDeadlineMs && requestTimeoutMs > 0 && requestTimeoutMs < renewDeadlineMs))
    throw new RangeError(
      `the retry period (${retryPeriodMs} ms) and request timeout (${requestTimeoutMs} ms) must be shorter than the renew deadline (${renewDeadlineMs} ms)`,
    );
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs, requestTimeoutMs };
}

/** A write refused because this replica does not (or no longer surely) hold the lease. */
export class NotLeaderError extends DriftlessError {
  constructor(identity: string, operation: string) {
    super({
      code: KnvCode.Transient,
      errorClass: ErrorClass.Retry,
      message: `${identity} does not hold the leader lease: refused to ${operation}; the leader will do it`,
    });
  }
}

export interface LeaderElectionOptions extends Partial<LeaderElectionTimings> {
  /** Used for the Lease only, with requests no longer than requestTimeoutMs and unfenced. */
  readonly client: KubeClient;
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica (pod name, or host and pid). */
  readonly identity: string;
  readonly log: Logger;
}

export interface LeadershipHandlers {
  readonly onStartedLeading: () => void;
  /** Called once when leadership is lost (not on a voluntary release); this elector never leads again. */
  readonly onStoppedLeading: () => void;
}

interface LeaseRecord {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaseTransitions?: number;
}

/** MicroTime: RFC 3339 with exactly six fractional digits (the API server parses it strictly). */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export class LeaderElector {
  readonly #o: LeaderElectionOptions;
  readonly #t: LeaderElectionTimings;
  readonly #abort = new AbortController();
  #handlers: LeadershipHandlers | undefined;
  #leading = false;
  /** Stepped down: a lost leader never leads again (its process ends; a new one campaigns). */
  #lost = false;
  /** performance.now() at the start of the last successful acquire or renew. */
  #renewedAt = 0;
  #deadlineTimer: NodeJS.Timeout | undefined;
  #observed: { key: string; at: number } | undefined;
  #loop: Promise<void> | undefined;
  #holder: string | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#o = options;
    this.#t = leaderElectionTimings(options);
  }

  /** True while this replica holds the lease and its renew deadline has not passed. */
  get isLeader(): boolean {
    return this.#leading && performance.now() < this.#renewedAt + this.#t.renewDeadlineMs;
  }

  /** The holder as last observed (this replica's identity when it leads). */
  get holder(): string | undefined {
    return this.#holder;
  }

  /**
   * Throws NotLeaderError unless this replica may act now. Called right before every write: a
   * leader past its renew deadline (a timer that fired late, a frozen process) steps down here.
   */
  fence(operation: string): void {
    if (this.isLeader) return;
    this.#checkDeadline();
    throw new NotLeaderError(this.#o.identity, operation);
  }

  start(handlers: LeadershipHandlers): void {
    this.#handlers ??= handlers;
    this.#loop ??= this.#run();
  }

  /** Stops campaigning; a leader releases the lease so a standby takes over at once. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    clearTimeout(this.#deadlineTimer);
    const release = this.isLeader;
    this.#leading = false;
    if (release) {
      await this.#release().catch((error: unknown) =>
        this.#o.log.warn("could not release the lease", { error: String(error) }),
      );
    }
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted && !this.#lost) {
      // Before any request: a leader past its deadline steps down without renewing.
      this.#checkDeadline();
      if (this.#lost) return;
      const startedAt = performance.now();
      const budget = this.#leading
        ? Math.min(this.#t.requestTimeoutMs, this.#renewedAt + this.#t.renewDeadlineMs - startedAt)
        : this.#t.requestTimeoutMs;
      let ok = false;
      try {
        // A whole number of ms: the time left before the renew deadline is fractional, and a fractional
        // delay makes AbortSignal.timeout throw, so every retry after a slow renewal failed unsent.
        const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(budget)));
        ok = await this.#tryAcquireOrRenew(AbortSignal.any([signal, timeout]));
      } catch (error) {
        if (!signal.aborted)
          this.#o.log.warn("leader election: lease request failed", { lease: this.#o.name, error: String(error) });
      }
      if (ok && !this.#lost && !signal.aborted) this.#renewed(startedAt);
      await delay(this.#t.retryPeriodMs, undefined, { signal }).catch(() => undefined);
    }
  }

  #renewed(startedAt: number): void {
    // The other replicas saw the new record no earlier than the request started.
    this.#renewedAt = startedAt;
    if (!this.#leading) {
      this.#leading = true;
      this.#o.log.info("became the leader", {
        lease: `${this.#o.namespace}/${this.#o.name}`,
        identity: this.#o.identity,
      });
      this.#handlers?.onStartedLeading();
    }
    this.#checkDeadline();
  }

  /** Steps down once the renew deadline has passed; else (re)arms the timer that checks again then. */
  #checkDeadline(): void {
    if (!this.#leading) return;
    clearTimeout(this.#deadlineTimer);
    const sinceRenewMs = performance.now() - this.#renewedAt;
    const left = this.#t.renewDeadlineMs - sinceRenewMs;
    if (left > 0) {
      this.#deadlineTimer = setTimeout(() => this.#checkDeadline(), Math.ceil(left)).unref();
      return;
    }
    this.#leading = false;
    this.#lost = true;
    // An unfinished renewal is abandoned: its answer would come too late to matter.
    this.#abort.abort();
    this.#o.log.error("lost the leader lease", {
      lease: `${this.#o.namespace}/${this.#o.name}`,
      identity: this.#o.identity,
      sinceRenewMs: Math.round(sinceRenewMs),
      renewDeadlineMs: this.#t.renewDeadlineMs,
    });
    this.#handlers?.onStoppedLeading();
  }

  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { client, namespace, name, identity } = this.#o;
    const now = new Date();
    const durationSeconds = Math.ceil(this.#t.leaseDurationMs / 1000);
    const live = await client.get(Resource.Lease, namespace, name, { signal });
    if (live === undefined) {
      const record: LeaseRecord = {
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      };
      try {
        await client.create(
          Resource.Lease,
          { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name, namespace }, spec: record },
          { signal },
        );
        this.#holder = identity;
        return true;
      } catch (error) {
        if (isAlreadyExists(error)) return false;
        throw error;
      }
    }
    const record = (live["spec"] ?? {}) as LeaseRecord;
    this.#holder = record.holderIdentity;
    const key = `${record.holderIdentity ?? ""}|${record.renewTime ?? ""}|${live.metadata.resourceVersion ?? ""}`;
    // By our own monotonic clock, never the record's times: machines' clocks may differ.
    if (this.#observed?.key !== key) this.#observed = { key, at: performance.now() };
    const heldByOther =
      record.holderIdentity !== undefined && record.holderIdentity !== "" && record.holderIdentity !== identity;
    const leaseMs = (record.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (heldByOther && performance.now() < this.#observed.at + leaseMs) return false;
    const next: LeaseRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime:
        record.holderIdentity === identity && record.acquireTime !== undefined ? record.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (record.leaseTransitions ?? 0) + (record.holderIdentity === identity ? 0 : 1),
    };
    try {
      await client.replace(Resource.Lease, { ...live, spec: next } as KubeObject, { signal });
      this.#holder = identity;
      return true;
    } catch (error) {
      // Someone else renewed or took it between our read and write.
      if (isConflict(error)) return false;
      throw error;
    }
  }

  async #release(): Promise<void> {
    const { client, namespace, name, identity } = this.#o;
    const live = await client.get(Resource.Lease, namespace, name);
    const record = (live?.["spec"] ?? {}) as LeaseRecord;
    if (live === undefined || record.holderIdentity !== identity) return;
    const { holderIdentity: _released, ...rest } = record;
    await client.replace(Resource.Lease, {
      ...live,
      spec: { ...rest, leaseDurationSeconds: 1, renewTime: microTime(new Date()) },
    });
    this.#o.log.info("released the leader lease", { lease: `${namespace}/${name}` });
  }
}

/** A leader elector and the client whose every write passes its fence, for one process campaigning for one Lease. */
export interface FencedClients {
  /** The Lease's own connections, so renewals never wait behind other traffic. */
  readonly lease: KubeClient;
  readonly elector: LeaderElector;
  /** Refuses every write unless this replica leads. */
  readonly client: KubeClient;
}

export async function fencedClients(options: {
  readonly kubeconfig: string | undefined;
  readonly userAgent: string;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly log: Logger;
  readonly timings?: Partial<LeaderElectionTimings>;
}): Promise<FencedClients> {
  const timings = leaderElectionTimings(options.timings);
  const { kubeconfig, userAgent } = options;
  // Every request ends before the renew deadline, and the Lease's take no Retry-After waits: the next
  // attempt is a retry period away.
  const lease = await KubeClient.fromKubeconfig(kubeconfig, {
    userAgent,
    timeoutMs: timings.requestTimeoutMs,
    retryAfterAttempts: 0,
  });
  const { namespace, name, identity, log } = options;
  const elector = new LeaderElector({ client: lease, namespace, name, identity, ...timings, log });
  const client = await KubeClient.fromKubeconfig(kubeconfig, {
    userAgent,
    timeoutMs: timings.requestTimeoutMs,
    fence: (operation) => elector.fence(operation),
  });
  return { lease, elector, client };
}
