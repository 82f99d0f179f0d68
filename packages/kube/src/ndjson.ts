/**
 * Splits a byte stream into newline-terminated lines. The API server writes one JSON watch event
 * per line, and chunk boundaries fall anywhere, including inside a multi-byte UTF-8 character, so
 * lines are cut as bytes and decoded only when complete.
 */

const newline = 0x0a;

/** Assembly buffers larger than this (after one huge event) are let go rather than kept for reuse. */
const keptPendingBytes = 1024 * 1024;

/**
 * Lines out of bytes whose memory is reused after each call (a socket's read buffer): a line inside
 * one call is passed as a view of it, valid during the callback only; a line cut across calls is
 * assembled in a buffer owned here, grown as needed and reused, so reading allocates nothing per line.
 */
export class ReusedBufferLines {
  #pending: Buffer = Buffer.alloc(0);
  #pendingBytes = 0;

  /** Calls `line` for every complete line (without its newline) in `bytes`; empty lines are skipped. */
  push(bytes: Buffer, line: (bytes: Buffer) => void): void {
    let start = 0;
    for (let at = bytes.indexOf(newline); at !== -1; at = bytes.indexOf(newline, start)) {
      if (this.#pendingBytes > 0) {
        this.#append(bytes, start, at);
        const whole = this.#pending.subarray(0, this.#pendingBytes);
        this.#pendingBytes = 0;
        line(whole);
        // One huge event (a CRD with a large schema) should not keep its size for the stream's life.
        if (this.#pending.length > keptPendingBytes) this.#pending = Buffer.alloc(0);
      } else if (at > start) {
        line(bytes.subarray(start, at));
      }
      start = at + 1;
    }
    if (start < bytes.length) this.#append(bytes, start, bytes.length);
  }

  /** The last line, when the stream ended without its newline. */
  flush(line: (bytes: Buffer) => void): void {
    const rest = this.#pending.subarray(0, this.#pendingBytes);
    this.#pendingBytes = 0;
    if (rest.toString("latin1").trim() !== "") line(rest);
  }

  /** Bytes held while waiting for a newline (to bound memory against a broken stream). */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  #append(bytes: Buffer, from: number, to: number): void {
    const needed = this.#pendingBytes + (to - from);
    if (needed > this.#pending.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, 2 * this.#pending.length, 4096));
      this.#pending.copy(grown, 0, 0, this.#pendingBytes);
      this.#pending = grown;
    }
    bytes.copy(this.#pending, this.#pendingBytes, from, to);
    this.#pendingBytes = needed;
  }
}
