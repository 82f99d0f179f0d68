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
