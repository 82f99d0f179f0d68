import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { peekMemberRange, peekWatchEventVersion } from "./json-peek.ts";

const line = (type: string, object: unknown): string => JSON.stringify({ type, object });

/** What a full parse says the event's object's resourceVersion is. */
function parsedVersion(text: string): string | undefined {
  const event = JSON.parse(text) as { type: string; object?: { metadata?: { resourceVersion?: unknown } } };
  if (event.type !== "ADDED" && event.type !== "MODIFIED") return undefined;
  const version = event.object?.metadata?.resourceVersion;
  return typeof version === "string" ? version : undefined;
}

void describe("peekWatchEventVersion", () => {
  void it("reads metadata.resourceVersion of a built-in object as the API server lays it out", () => {
    const cm = {
      kind: "ConfigMap",
      apiVersion: "v1",
      metadata: { name: "a", namespace: "ns", uid: "u", resourceVersion: "12345", creationTimestamp: "t" },
      data: { resourceVersion: "1" },
    };
    assert.equal(peekWatchEventVersion(line("ADDED", cm)), "12345");
    assert.equal(peekWatchEventVersion(line("MODIFIED", cm)), "12345");
  });

  void it("is not fooled by labels, annotations or nested objects that carry the same key first", () => {
    // A custom resource: keys sorted, so labels and annotations come before resourceVersion.
    const cr = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: {
        annotations: {
          resourceVersion: "1",
          record: '{"metadata":{"resourceVersion":"2"}} \\" } ] {',
          "ends-with-backslash": "a\\",
        },
        labels: { resourceVersion: "3" },
        managedFields: [{ fieldsV1: { "f:metadata": { "f:resourceVersion": {} } }, manager: "m" }],
        name: "w",
        resourceVersion: "777",
      },
      spec: { template: { metadata: { resourceVersion: "4" } } },
    };
    assert.equal(peekWatchEventVersion(line("ADDED", cr)), "777");
    // The object's own metadata is found even when a nested metadata comes first in the text.
    const specFirst = { spec: { metadata: { resourceVersion: "5" } }, metadata: { resourceVersion: "888" } };
    assert.equal(peekWatchEventVersion(line("MODIFIED", specFirst)), "888");
  });

  void it("answers undefined for other events and for text it does not recognise", () => {
    const obj = { metadata: { name: "a", resourceVersion: "9" } };
    assert.equal(peekWatchEventVersion(line("DELETED", obj)), undefined);
    assert.equal(peekWatchEventVersion(line("BOOKMARK", obj)), undefined);
    assert.equal(peekWatchEventVersion(line("ERROR", { code: 410 })), undefined);
    assert.equal(peekWatchEventVersion(JSON.stringify({ object: obj, type: "ADDED" })), undefined, "type not first");
    assert.equal(peekWatchEventVersion(JSON.stringify({ type: "ADDED", object: obj }, null, 1)), undefined);
    assert.equal(peekWatchEventVersion(line("ADDED", { metadata: { name: "a" } })), undefined);
    assert.equal(peekWatchEventVersion(line("ADDED", { metadata: { resourceVersion: 9 } })), undefined);
    assert.equal(peekWatchEventVersion(line("ADDED", { metadata: "x" })), undefined);
    assert.equal(peekWatchEventVersion(line("ADDED", { metadata: { resourceVersion: 'a"b' } })), undefined);
    const whole = line("ADDED", { kind: "X", metadata: { name: "a", resourceVersion: "9" } });
    for (let cut = 0; cut < whole.length; cut++) {
      const peeked = peekWatchEventVersion(whole.slice(0, cut));
      // A truncated line either stops before the version or already holds all of it.
      assert.ok(peeked === undefined || peeked === "9", `cut at ${cut}: ${peeked}`);
    }
  });

  void it("agrees with a full parse on random objects", () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const keys = ["metadata", "resourceVersion", "name", "spec", 'a"b', "x\\", "{", "]", "labels"];
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.3) return pick(["1", "2", 'q"uote', "b\\", "{[", 3, true, null, -1.5e3]);
      if (r < 0.5) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      const obj: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 4); i > 0; i--) obj[pick(keys)] = value(depth + 1);
      return obj;
    };
    let agreedWithVersion = 0;
    for (let i = 0; i < 3000; i++) {
      const object = value(0);
      if (random() < 0.5 && typeof object === "object" && object !== null && !Array.isArray(object)) {
        (object as Record<string, unknown>)["metadata"] = { ...(value(1) as object), resourceVersion: String(i) };
      }
      const text = line(pick(["ADDED", "MODIFIED", "DELETED"]), object);
      const expected = parsedVersion(text);
      assert.equal(peekWatchEventVersion(text), expected, text);
      if (expected !== undefined) agreedWithVersion++;
    }
    assert.ok(agreedWithVersion > 300, `only ${agreedWithVersion} cases had a version`);
  });
});

void describe("peekMemberRange", () => {
  void it("finds a member's bytes in a Latin-1 reading of UTF-8, to decode just them", () => {
    const object = {
      apiVersion: "kpt.dev/v1alpha1",
      kind: "ResourceGroup",
      metadata: {
        name: "r\u00e9sum\u00e9",
        annotations: { "\u{1F600}": 'caf\u00e9 "quoted" }' },
        resourceVersion: "7",
      },
      spec: {
        resources: Array.from({ length: 2000 }, (_, i) => ({ kind: "ConfigMap", name: `cm-${i}`, metadata: {} })),
      },
    };
    const bytes = Buffer.from(JSON.stringify(object), "utf8");
    const range = peekMemberRange(bytes.toString("latin1", 0, 4096), "metadata");
    assert.ok(range !== undefined);
    assert.deepEqual(JSON.parse(bytes.toString("utf8", range.start, range.end)), object.metadata);
    assert.equal(peekMemberRange(bytes.toString("latin1", 0, 40), "metadata"), undefined, "cut before its end");
    assert.equal(peekMemberRange(bytes.toString("latin1"), "status"), undefined);
  });
});
