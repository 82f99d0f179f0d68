import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LineSplitter } from "./ndjson.ts";

void describe("LineSplitter", () => {
  void it("returns complete lines and holds the unfinished rest", () => {
    const s = new LineSplitter();
    assert.deepEqual(s.push(Buffer.from('{"a":1}\n{"b"')), ['{"a":1}']);
    assert.equal(s.pendingBytes, 4);
    assert.deepEqual(s.push(Buffer.from(":2}\n\n{")), ['{"b":2}']);
    assert.deepEqual(s.push(Buffer.from("}")), []);
    assert.equal(s.flush(), "{}");
    assert.equal(s.flush(), undefined);
  });

  void it("reassembles a multi-byte character cut between chunks", () => {
    const line = Buffer.from('{"name":"caf\u00e9 \u{1F600}"}\n');
    // Cut inside the two-byte é and inside the four-byte emoji.
    const cuts = [line.indexOf(0xc3) + 1, line.indexOf(0xf0) + 2];
    const s = new LineSplitter();
    const out = [
      ...s.push(line.subarray(0, cuts[0])),
      ...s.push(line.subarray(cuts[0], cuts[1])),
      ...s.push(line.subarray(cuts[1])),
    ];
    assert.deepEqual(out, ['{"name":"caf\u00e9 \u{1F600}"}']);
  });

  void it("splits many lines in one chunk, one byte at a time, identically", () => {
    const text = Array.from({ length: 50 }, (_, i) => JSON.stringify({ i, s: "x".repeat(i) })).join("\n") + "\n";
    const whole = new LineSplitter().push(Buffer.from(text));
    const s = new LineSplitter();
    const bytes = Buffer.from(text);
    const dribbled: string[] = [];
    for (let i = 0; i < bytes.length; i++) dribbled.push(...s.push(bytes.subarray(i, i + 1)));
    assert.equal(whole.length, 50);
    assert.deepEqual(dribbled, whole);
  });
});
