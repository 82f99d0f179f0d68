/**
 * Leader election on a `coordination.k8s.io/v1` Lease, the way client-go does it: the holder
 * renews the lease every retry period; another replica takes it over only after it has seen the
 * same record, unrenewed, for a whole lease duration by its own clock (so clock skew between
 * machines does not matter). A leader that cannot renew within the renew deadline steps down
 * before anyone else may take over, so two replicas never act at once.
 */
import { setTimeout as delay } from "node:timers/promises";
import { isAlreadyExists, isConflict, type KubeClient, type KubeObject } from "@driftless/kube";
import type { Logger } from "@driftless/sync";
import { Resource } from "./resources.ts";

export interface LeaderElectionOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica (pod name, or host and pid). */
  readonly identity: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly log: Logger;
  readonly onStartedLeading: () => void;
  /** Called once when leadership is lost (not on a voluntary release). */
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
  readonly #o: Required<Omit<LeaderElectionOptions, "log" | "onStartedLeading" | "onStoppedLeading" | "client">> &
    LeaderElectionOptions;
  readonly #abort = new AbortController();
  #leading = false;
  #lastRenew = 0;
  #observed: { key: string; at: number } | undefined;
  #loop: Promise<void> | undefined;
  #holder: string | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /** The holder as last observed (this replica's identity when it leads). */
  get holder(): string | undefined {
    return this.#holder;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops campaigning; a leader releases the lease so a standby takes over at once. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    if (this.#leading) {
      this.#leading = false;
      await this.#release().catch((error: unknown) =>
        this.#o.log.warn("could not release the lease", { error: String(error) }),
      );
    }
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let ok = false;
      try {
        ok = await this.#tryAcquireOrRenew();
      } catch (error) {
        this.#o.log.warn("leader election: lease request failed", { lease: this.#o.name, error: String(error) });
      }
      if (ok) {
        this.#lastRenew = Date.now();
        if (!this.#leading) {
          this.#leading = true;
          this.#o.log.info("became the leader", {
            lease: `${this.#o.namespace}/${this.#o.name}`,
            identity: this.#o.identity,
          });
          this.#o.onStartedLeading();
        }
      } else if (this.#leading && Date.now() - this.#lastRenew > this.#o.renewDeadlineMs) {
        this.#leading = false;
        this.#o.log.error("lost the leader lease", {
          lease: `${this.#o.namespace}/${this.#o.name}`,
          identity: this.#o.identity,
        });
        this.#o.onStoppedLeading();
        return;
      }
      await delay(this.#o.retryPeriodMs, undefined, { signal }).catch(() => undefined);
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { client, namespace, name, identity } = this.#o;
    const now = new Date();
    const durationSeconds = Math.ceil(this.#o.leaseDurationMs / 1000);
    const live = await client.get(Resource.Lease, namespace, name);
    if (live === undefined) {
      const record: LeaseRecord = {
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      };
      try {
        await client.create(Resource.Lease, {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace },
          spec: record,
        });
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
    if (this.#observed?.key !== key) this.#observed = { key, at: Date.now() };
    const heldByOther =
      record.holderIdentity !== undefined && record.holderIdentity !== "" && record.holderIdentity !== identity;
    const leaseMs = (record.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (heldByOther && Date.now() < this.#observed.at + leaseMs) return false;
    const next: LeaseRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime:
        record.holderIdentity === identity && record.acquireTime !== undefined ? record.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (record.leaseTransitions ?? 0) + (record.holderIdentity === identity ? 0 : 1),
    };
    try {
      await client.replace(Resource.Lease, { ...live, spec: next } as KubeObject);
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
