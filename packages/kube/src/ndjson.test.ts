import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReusedBufferLines } from "./ndjson.ts";

/**
 * Feeds `pieces` as a socket read with `onread` does: each copied into one buffer that is overwritten
 * after the call, so a line kept as a view instead of decoded at once would come out as garbage.
 */
function linesOf(splitter: ReusedBufferLines, pieces: readonly Buffer[], flush = false): string[] {
  const reused = Buffer.alloc(64 * 1024);
  const out: string[] = [];
  const take = (line: Buffer): void => void out.push(line.toString("utf8"));
  for (const piece of pieces) {
    piece.copy(reused);
    splitter.push(reused.subarray(0, piece.length), take);
    reused.fill(0x7e);
  }
  if (flush) splitter.flush(take);
  return out;
}

void describe("ReusedBufferLines", () => {
  void it("returns complete lines, skips empty ones, and holds the unfinished rest", () => {
    const s = new ReusedBufferLines();
    assert.deepEqual(linesOf(s, [Buffer.from('{"a":1}\n{"b"')]), ['{"a":1}']);
    assert.equal(s.pendingBytes, 4);
    assert.deepEqual(linesOf(s, [Buffer.from(":2}\n\n{")]), ['{"b":2}']);
    assert.deepEqual(linesOf(s, [Buffer.from("}")], true), ["{}"]);
    assert.deepEqual(linesOf(s, [], true), []);
  });

  void it("reassembles a multi-byte character cut between reads", () => {
    const line = Buffer.from('{"name":"caf\u00e9 \u{1F600}"}\n');
    // Cut inside the two-byte é and inside the four-byte emoji.
    const cuts = [line.indexOf(0xc3) + 1, line.indexOf(0xf0) + 2] as const;
    const pieces = [line.subarray(0, cuts[0]), line.subarray(cuts[0], cuts[1]), line.subarray(cuts[1])];
    assert.deepEqual(linesOf(new ReusedBufferLines(), pieces), ['{"name":"caf\u00e9 \u{1F600}"}']);
  });

  void it("splits many lines identically whether read whole or one byte at a time", () => {
    const text = Array.from({ length: 50 }, (_, i) => JSON.stringify({ i, s: "x".repeat(i * 40) })).join("\n") + "\n";
    const bytes = Buffer.from(text);
    const whole = linesOf(new ReusedBufferLines(), [bytes]);
    const dribbled = linesOf(
      new ReusedBufferLines(),
      Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1)),
    );
    assert.equal(whole.length, 50);
    assert.deepEqual(dribbled, whole);
    assert.deepEqual(whole, text.trimEnd().split("\n"));
  });
});
