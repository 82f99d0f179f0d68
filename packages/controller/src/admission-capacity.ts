/**
 * How much the admission endpoint takes in at once. Any pod can reach the port, and a review refused for
 * want of room fails open (failurePolicy Ignore), so nothing a client merely announces or holds open may
 * keep the API server out: requests count against a number and a budget of bytes actually received, and
 * room is made by cutting the request, or closing the connection, that has gone longest without progress.
 * The API server sends its review at once, so it is never that one for long.
 */

export interface AdmissionLimits {
  /** A larger body is refused (413) before it is read. */
  readonly maxBodyBytes: number;
  /** Requests handled at once; beyond it the oldest still receiving its body is cut (429). */
  readonly maxConcurrent: number;
  /** Body bytes received and not yet parsed; beyond it the bodies receiving longest are cut (429). */
  readonly maxBytesInFlight: number;
  /** A body with more JSON tokens than this is refused (413) unparsed (json-tokens.ts). */
  readonly maxJsonTokens: number;
}

export const DefaultAdmissionLimits: AdmissionLimits = {
  // The API server refuses write bodies over 3 MiB and etcd objects over 1.5 MiB; only an update near both
  // limits makes a larger review, and refusing it fails open (failurePolicy Ignore).
  maxBodyBytes: 3 * 1024 * 1024,
  // A reconciler applies 32 objects at once.
  maxConcurrent: 32,
  // 8 largest reviews: 24 MiB of bodies, plus one parse at a time (bounded by maxJsonTokens).
  maxBytesInFlight: 24 * 1024 * 1024,
  // A CRD's schema, the densest object, has ~1 token per 10 bytes: 150k at etcd's 1.5 MiB, twice in a
  // review. A parse of 512k tokens takes at most ~18 MiB of heap (measured; 3 MiB of `[{},…]` took 67).
  maxJsonTokens: 512 * 1024,
};

/** What a request holds while admitted; released once, whatever happens. */
export interface AdmissionTicket {
  /** Counts `bytes` more of the body as received, cutting the bodies receiving longest if over budget. */
  received(bytes: number): void;
  /** The body is parsed and dropped: its bytes go back to the budget, the request keeps its slot (uncut). */
  releaseBytes(): void;
  release(): void;
}

interface Held {
  bytes: number;
  readonly release: () => void;
  readonly cut: () => void;
}

export class AdmissionCapacity {
  readonly #limits: AdmissionLimits;
  #requests = 0;
  #bytes = 0;
  /** Requests still receiving their body, in order of admission: the first is cut first. */
  readonly #receiving = new Set<Held>();

  constructor(limits: AdmissionLimits) {
    this.#limits = limits;
  }

  /**
   * A ticket, or undefined when every slot holds a request whose body has arrived (it is being answered).
   * `cut` is called, after the ticket is released, when this request is cut to make room for another.
   */
  tryAdmit(cut: () => void): AdmissionTicket | undefined {
    if (this.#requests >= this.#limits.maxConcurrent) this.#cutOldest(undefined);
    if (this.#requests >= this.#limits.maxConcurrent) return undefined;
    this.#requests++;
    let admitted = true;
    const held: Held = {
      bytes: 0,
      cut,
      release: () => {
        if (!admitted) return;
        admitted = false;
        releaseBytes();
        this.#requests--;
      },
    };
    const releaseBytes = (): void => {
      this.#receiving.delete(held);
      this.#bytes -= held.bytes;
      held.bytes = 0;
    };
    this.#receiving.add(held);
    return { received: (bytes) => this.#received(held, bytes), releaseBytes, release: held.release };
  }

  #received(held: Held, bytes: number): void {
    if (!this.#receiving.has(held)) return;
    // A chunk past maxBodyBytes is refused (413) by the reader; it never counts for more than the limit.
    const counted = Math.min(bytes, this.#limits.maxBodyBytes - held.bytes);
    held.bytes += counted;
    this.#bytes += counted;
    while (this.#bytes > this.#limits.maxBytesInFlight && this.#cutOldest(held));
  }

  /** Cuts the request receiving longest other than `spare`; false if there is none. */
  #cutOldest(spare: Held | undefined): boolean {
    for (const held of this.#receiving) {
      if (held === spare) continue;
      held.release();
      held.cut();
      return true;
    }
    return false;
  }

  get inFlight(): { readonly requests: number; readonly bytes: number } {
    return { requests: this.#requests, bytes: this.#bytes };
  }
}

/**
 * The open connections, for closing one when a new one comes over the cap: the one that has gone longest
 * without progress (accepted, a request's headers complete, an answer sent), never one whose review is
 * being answered, and one that was never answered before one that was. Refusing the newcomer instead, as a
 * plain cap does, let idle sockets keep the API server out; a cap per remote address would not help either,
 * as the API server connects from one address, which a pod on its node can share. The API server's
 * kept-alive connection is the oldest once a crowd arrives: closed as it sends its next review, that review
 * failed (open), so connections that never carried a whole request go first.
 */
export class ConnectionRoster {
  readonly #max: number;
  /** Closers of connections that never had a request answered, least recent progress first. */
  readonly #unanswered = new Map<string, () => void>();
  /** Closers of connections that had a request answered and wait for the next, least recent progress first. */
  readonly #answered = new Map<string, () => void>();
  readonly #answering = new Map<string, () => void>();

  constructor(maxConnections: number) {
    this.#max = maxConnections;
  }

  /** A new connection (named by its peer's address and port); closes one if over the cap, maybe this one. */
  add(key: string, close: () => void): void {
    this.#unanswered.set(key, close);
    if (this.size <= this.#max) return;
    const [oldest] = this.#unanswered.size > 0 ? this.#unanswered : this.#answered;
    if (oldest === undefined) return;
    this.#unanswered.delete(oldest[0]);
    this.#answered.delete(oldest[0]);
    oldest[1]();
  }

  /** Headers complete, or an answer sent: the connection goes to the back of its line. */
  progressed(key: string): void {
    const answering = this.#answering.get(key);
    if (answering !== undefined) {
      this.#answering.delete(key);
      this.#answered.set(key, answering);
      return;
    }
    for (const line of [this.#unanswered, this.#answered]) {
      const close = line.get(key);
      if (close === undefined) continue;
      line.delete(key);
      line.set(key, close);
      return;
    }
  }

  /** Its body has arrived: it is not closed for others until answered (at most maxConcurrent are). */
  answering(key: string): void {
    const close = this.#unanswered.get(key) ?? this.#answered.get(key);
    if (close === undefined) return;
    this.#unanswered.delete(key);
    this.#answered.delete(key);
    this.#answering.set(key, close);
  }

  remove(key: string): void {
    this.#unanswered.delete(key);
    this.#answered.delete(key);
    this.#answering.delete(key);
  }

  closeAll(): void {
    for (const line of [this.#unanswered, this.#answered, this.#answering])
      for (const close of [...line.values()]) close();
  }

  get size(): number {
    return this.#unanswered.size + this.#answered.size + this.#answering.size;
  }
}
