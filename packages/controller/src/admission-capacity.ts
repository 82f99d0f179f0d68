/**
 * How much the admission endpoint takes in at once. Memory is spent on bodies, so requests are admitted
 * against a byte budget as well as a count: the API server's usual few-KiB reviews go through by the
 * dozen, while at most `maxBytesInFlight / maxBodyBytes` largest ones are read at a time.
 */

export interface AdmissionLimits {
  /** A larger body is refused (413) before it is read. */
  readonly maxBodyBytes: number;
  /** Requests handled at once. */
  readonly maxConcurrent: number;
  /** Bodies (as announced by Content-Length; a chunked one counts as maxBodyBytes) being read at once. */
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
  /** The body is parsed and dropped: its bytes go back to the budget, the request keeps its slot. */
  releaseBytes(): void;
  release(): void;
}

export class AdmissionCapacity {
  readonly #limits: AdmissionLimits;
  #requests = 0;
  #bytes = 0;

  constructor(limits: AdmissionLimits) {
    this.#limits = limits;
  }

  /** A ticket for a body of `announced` bytes (undefined: chunked), or undefined when full. */
  tryAdmit(announced: number | undefined): AdmissionTicket | undefined {
    const bytes = Math.min(announced ?? this.#limits.maxBodyBytes, this.#limits.maxBodyBytes);
    if (this.#requests >= this.#limits.maxConcurrent) return undefined;
    if (this.#bytes + bytes > this.#limits.maxBytesInFlight) return undefined;
    this.#requests++;
    this.#bytes += bytes;
    let heldBytes = bytes;
    let held = true;
    const releaseBytes = (): void => {
      this.#bytes -= heldBytes;
      heldBytes = 0;
    };
    return {
      releaseBytes,
      release: () => {
        if (!held) return;
        held = false;
        releaseBytes();
        this.#requests--;
      },
    };
  }

  get inFlight(): { readonly requests: number; readonly bytes: number } {
    return { requests: this.#requests, bytes: this.#bytes };
  }
}
