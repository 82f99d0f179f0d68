import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KubeApiError } from "./errors.ts";
import { WatchIdleError, parseWatchEvent, readWatchEvents, type BodySource } from "./watch.ts";
import type { WatchEvent } from "./types.ts";

const fill = { apiVersion: "v1", kind: "ConfigMap" };

/**
 * A body delivered as a socket read with `onread` delivers it: each chunk copied into one buffer that
 * is overwritten after the call, so a decoder that kept a view of it would see garbage.
 */
function pushedBody(
  chunks: (string | Buffer)[],
  options: { end?: boolean } = {},
): BodySource & { pauses: number; delivered: number } {
  const reused = Buffer.alloc(1 << 20);
  let paused = false;
  let next: (() => void) | undefined;
  const body = {
    pauses: 0,
    delivered: 0,
    start(sink: Parameters<BodySource["start"]>[0]) {
      let i = 0;
      const deliver = (): void => {
        if (paused) {
          next = deliver;
          return;
        }
        if (i === chunks.length) {
          if (options.end !== false) sink.end();
          return;
        }
        const chunk = chunks[i++] ?? "";
        const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
        bytes.copy(reused);
        sink.data(reused.subarray(0, bytes.length));
        body.delivered++;
        reused.fill(0x7e, 0, bytes.length);
        setImmediate(deliver);
      };
      setImmediate(deliver);
    },
    pause() {
      if (!paused) body.pauses++;
      paused = true;
    },
    resume() {
      paused = false;
      const resumed = next;
      next = undefined;
      if (resumed !== undefined) setImmediate(resumed);
    },
  };
  return body;
}

async function collect(
  chunks: (string | Buffer)[],
  idleMs = 5000,
  isEcho?: (resourceVersion: string) => boolean,
): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const e of readWatchEvents(pushedBody(chunks), fill, {
    signal: new AbortController().signal,
    idleMs,
    operation: "watch configmaps",
    ...(isEcho === undefined ? {} : { isEcho }),
  }))
    out.push(e);
  return out;
}

void describe("watch decoding", () => {
  void it("turns the echo of a version the caller holds into a bookmark, without parsing its object", async () => {
    const asked: string[] = [];
    const events = await collect(
      [
        // Not valid JSON past the metadata: parsing it would throw, so a bookmark proves it was not parsed.
        '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5"},BROKEN\n',
        '{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"6"}}}\n',
        '{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"7"}}}\n',
      ],
      5000,
      (version) => {
        asked.push(version);
        return version === "5";
      },
    );
    assert.deepEqual(
      events.map((e) => `${e.type}@${e.type === "ERROR" ? "" : e.object.metadata.resourceVersion}`),
      ["BOOKMARK@5", "MODIFIED@6", "DELETED@7"],
    );
    assert.deepEqual(asked, ["5", "6"], "only ADDED and MODIFIED events are offered");
  });

  void it("finds the version of a custom resource past a long annotation, and of one cut in a multi-byte character", async () => {
    // Keys sorted, as the server writes custom resources: annotations before resourceVersion.
    const long = JSON.stringify({
      type: "ADDED",
      object: {
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { annotations: { note: "\u00e9".repeat(800) }, name: "w", resourceVersion: "41" },
      },
    });
    const asked: string[] = [];
    const events = await collect([long + "\n"], 5000, (version) => {
      asked.push(version);
      return true;
    });
    assert.deepEqual(asked, ["41"]);
    assert.equal(events[0]?.type, "BOOKMARK");
  });

  void it("parses events split anywhere across chunks", async () => {
    const text =
      '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"n","resourceVersion":"5"}}}\n' +
      '{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"n","resourceVersion":"6"},"data":{"k":"\u00e9"}}}\n' +
      '{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}\n' +
      '{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"n","resourceVersion":"10"}}}\n';
    const bytes = Buffer.from(text);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 7) chunks.push(bytes.subarray(i, i + 7));
    const events = await collect(chunks);
    assert.deepEqual(
      events.map(
        (e) =>
          `${e.type} ${e.type === "ERROR" ? "" : `${e.object.metadata.name}@${e.object.metadata.resourceVersion}`}`,
      ),
      ["ADDED a@5", "MODIFIED a@6", "BOOKMARK @9", "DELETED a@10"],
    );
    const modified = events[1];
    assert.ok(modified !== undefined && modified.type === "MODIFIED");
    assert.deepEqual(modified.object["data"], { k: "\u00e9" });
  });

  void it("delivers ERROR events with their Status", () => {
    const e = parseWatchEvent(
      '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (216)","reason":"Expired","code":410}}',
      fill,
      "op",
    );
    assert.equal(e.type, "ERROR");
    assert.equal(e.object.code, 410);
    assert.equal(e.object.reason, "Expired");
  });

  void it("fills kind and apiVersion the server left out", () => {
    const e = parseWatchEvent('{"type":"ADDED","object":{"metadata":{"name":"a"}}}', fill, "op");
    assert.ok(e.type === "ADDED");
    assert.equal(e.object.kind, "ConfigMap");
    assert.equal(e.object.apiVersion, "v1");
  });

  void it("rejects garbage as a retryable InvalidResponse", () => {
    for (const line of [
      "not json",
      '{"type":"WHAT","object":{}}',
      '{"type":"ADDED","object":{"metadata":{}}}',
      "[1]",
    ]) {
      assert.throws(
        () => parseWatchEvent(line, fill, "op"),
        (e: unknown) => e instanceof KubeApiError && e.reason === "InvalidResponse" && e.retryable,
        line,
      );
    }
  });

  void it("parses a last event that lacks its newline", async () => {
    const events = await collect(['{"type":"ADDED","object":{"metadata":{"name":"a"}}}']);
    assert.equal(events.length, 1);
  });

  void it("cuts a stream that stays silent past the idle deadline", async () => {
    const body = pushedBody(['{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'], { end: false });
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const e of readWatchEvents(body, fill, {
          signal: new AbortController().signal,
          idleMs: 50,
          operation: "op",
        }))
          seen.push(e.type);
      })(),
      WatchIdleError,
    );
    assert.deepEqual(seen, ["ADDED"]);
  });

  void it("pauses the body while decoded events wait for a slow reader, and delivers every one", async () => {
    const line = (i: number): string => `{"type":"ADDED","object":{"metadata":{"name":"cm-${i}"}}}\n`;
    // 40 chunks of 100 events. After its first event the reader stops until the body pauses or has sent
    // everything: a reader slowed by a timer kept pace with the body on a loaded machine, where every turn of
    // the event loop took longer than the timer, and the body never had to pause.
    const chunks = Array.from({ length: 40 }, (_, c) =>
      Array.from({ length: 100 }, (_, i) => line(c * 100 + i)).join(""),
    );
    const body = pushedBody(chunks);
    const names: string[] = [];
    for await (const e of readWatchEvents(body, fill, {
      signal: new AbortController().signal,
      idleMs: 5000,
      operation: "op",
    })) {
      names.push(e.type === "ERROR" ? "" : e.object.metadata.name);
      while (names.length === 1 && body.pauses === 0 && body.delivered < chunks.length)
        await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(names.length, 4000);
    assert.deepEqual(names.slice(0, 3), ["cm-0", "cm-1", "cm-2"]);
    assert.equal(names.at(-1), "cm-3999");
    assert.ok(body.pauses > 0, "the body was paused at least once");
  });
});
