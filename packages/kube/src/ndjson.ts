/**
 * Splits a byte stream into newline-terminated lines. The API server writes one JSON watch event
 * per line, and chunk boundaries fall anywhere, including inside a multi-byte UTF-8 character, so
 * lines are cut as bytes and decoded only when complete.
 */

const newline = 0x0a;

export class LineSplitter {
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  /** The complete lines (without the newline) that `chunk` finishes; empty lines are skipped. */
  push(chunk: Buffer): string[] {
    return this.pushBytes(chunk).map((line) => line.toString("utf8"));
  }

  /**
   * push() as bytes: a caller that can decide from a line's first bytes (a watch event we wrote
   * ourselves) never decodes the rest. A line inside one chunk is a view of it, not a copy.
   */
  pushBytes(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    for (let at = chunk.indexOf(newline); at !== -1; at = chunk.indexOf(newline, start)) {
      let line: Buffer;
      if (this.#pendingBytes > 0) {
        this.#pending.push(chunk.subarray(start, at));
        line = Buffer.concat(this.#pending);
        this.#pending = [];
        this.#pendingBytes = 0;
      } else {
        line = chunk.subarray(start, at);
      }
      if (line.length > 0) lines.push(line);
      start = at + 1;
    }
    if (start < chunk.length) {
      this.#pending.push(chunk.subarray(start));
      this.#pendingBytes += chunk.length - start;
    }
    return lines;
  }

  /** What is left after the stream ended (a last line without a newline), or undefined. */
  flush(): string | undefined {
    return this.flushBytes()?.toString("utf8");
  }

  /** flush() as bytes. */
  flushBytes(): Buffer | undefined {
    if (this.#pendingBytes === 0) return undefined;
    const rest = Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    return rest.toString("latin1").trim() === "" ? undefined : rest;
  }

  /** Bytes held while waiting for a newline (to bound memory against a broken stream). */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }
}

/**
 * Lines out of bytes whose memory is reused after each call (a socket's read buffer): a line inside
 * one call is passed as a view of it, valid during the callback only; a line cut across calls is
 * assembled in a buffer owned here, grown as needed and reused, so reading allocates nothing per line.
 */
const keptPendingBytes = 1024 * 1024;

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
