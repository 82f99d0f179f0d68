/**
 * Streams read off their own socket: the HTTP/1.1 framing (against Node's own HTTP server, and
 * byte by byte), flow control, and how a broken or aborted stream ends.
 */
import assert from "node:assert/strict";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { agentTls } from "./agent.ts";
import {
  framingFor,
  openStreamSocket,
  parseHead,
  type BodySink,
  type OpenedStream,
  type StreamTarget,
} from "./stream-socket.ts";

let server: http.Server;
let target: StreamTarget;
let respond: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.end();

before(async () => {
  server = http.createServer((req, res) => respond(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = { server: `http://127.0.0.1:${port}`, secure: false, hostname: "127.0.0.1", port, basePath: "" };
  target = { endpoint, tls: agentTls({}), open: new Set() };
});

after(() => {
  server.closeAllConnections();
  server.close();
});

/** The whole body as text, copied out of the reused read buffer as it arrives. */
function bodyOf(stream: OpenedStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: string[] = [];
    stream.start({
      data: (bytes) => parts.push(bytes.toString("latin1")),
      end: () => resolve(parts.join("")),
      error: reject,
    });
  });
}

const request = {
  path: "/watch?x=1",
  headers: { Authorization: "Bearer t", Accept: "application/json" },
  timeoutMs: 5000,
};

void describe("openStreamSocket against Node's HTTP server", () => {
  void it("sends the path and headers, and reads a chunked body written in many pieces", async () => {
    let seen: http.IncomingHttpHeaders = {};
    let url = "";
    respond = (req, res) => {
      seen = req.headers;
      url = req.url ?? "";
      res.writeHead(200, { "content-type": "application/json" });
      let i = 0;
      const tick = setInterval(() => {
        res.write(`line ${i}\n`.repeat(1 + (i % 7)));
        if (++i === 50) {
          clearInterval(tick);
          res.end();
        }
      }, 0);
    };
    const stream = await openStreamSocket(target, request);
    assert.equal(stream.head.status, 200);
    assert.equal(stream.head.headers["transfer-encoding"], "chunked");
    const body = await bodyOf(stream);
    const expected = Array.from({ length: 50 }, (_, i) => `line ${i}\n`.repeat(1 + (i % 7))).join("");
    assert.equal(body, expected);
    assert.equal(url, "/watch?x=1");
    assert.equal(seen.authorization, "Bearer t");
    assert.equal(seen.connection, "close");
    assert.equal(target.open.size, 0, "the connection is closed after the body");
  });

  void it("reads a length-delimited error answer", async () => {
    respond = (_req, res) => {
      const text = JSON.stringify({ kind: "Status", code: 410, reason: "Expired" });
      res.writeHead(410, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    };
    const stream = await openStreamSocket(target, request);
    assert.equal(stream.head.status, 410);
    assert.equal(JSON.parse(await bodyOf(stream)).reason, "Expired");
  });

  void it("reports a body cut by the server as an error, not as its end", async () => {
    respond = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("partial\n");
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const stream = await openStreamSocket(target, request);
    await assert.rejects(bodyOf(stream), /closed before the response was complete/);
  });

  void it("stops reading while paused: the server's writes wait, then all arrive", async () => {
    respond = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      for (let i = 0; i < 64; i++) res.write("x".repeat(64 * 1024));
      res.end();
    };
    const stream = await openStreamSocket(target, request);
    let received = 0;
    const done = new Promise<void>((resolve, reject) => {
      const sink: BodySink = {
        data: (bytes) => {
          received += bytes.length;
          if (received >= 256 * 1024 && received - bytes.length < 256 * 1024) {
            stream.pause();
            const atPause = received;
            setTimeout(() => {
              // A read already under way may land; no more than one buffer's worth.
              assert.ok(received - atPause <= 64 * 1024, `read ${received - atPause} bytes while paused`);
              stream.resume();
            }, 100);
          }
        },
        end: resolve,
        error: reject,
      };
      stream.start(sink);
    });
    await done;
    assert.equal(received, 64 * 64 * 1024);
  });

  void it("rejects on abort before the head, and on a head that never comes", async () => {
    respond = () => undefined; // never answers
    const controller = new AbortController();
    const opening = openStreamSocket(target, { ...request, signal: controller.signal });
    controller.abort(new Error("stopped"));
    await assert.rejects(opening, /stopped/);
    await assert.rejects(openStreamSocket(target, { ...request, timeoutMs: 50 }), /no response within 50 ms/);
    server.closeAllConnections();
  });

  void it("tells a sink that starts late how the stream ended meanwhile (aborted after the head)", async () => {
    respond = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("first\n");
    };
    const controller = new AbortController();
    const stream = await openStreamSocket(target, { ...request, signal: controller.signal });
    controller.abort(new Error("stopped after the head"));
    await assert.rejects(bodyOf(stream), /stopped after the head/);
    server.closeAllConnections();
  });

  void it("refuses a header value that would end the request early", async () => {
    await assert.rejects(
      openStreamSocket(target, { ...request, headers: { "X-Bad": "a\r\nGET /other HTTP/1.1" } }),
      /line break/,
    );
  });
});

void describe("openStreamSocket against a server that writes a byte at a time", () => {
  void it("assembles a head split across reads, and a body that came in the head's read", async () => {
    const raw = net.createServer((socket) => {
      socket.once("data", () => {
        const answer = Buffer.from(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n0\r\n\r\n",
        );
        let at = 0;
        const tick = setInterval(() => {
          socket.write(answer.subarray(at, at + 1));
          if (++at === answer.length) {
            clearInterval(tick);
            socket.end();
          }
        }, 0);
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    const { port } = raw.address() as AddressInfo;
    const endpoint = { server: `http://127.0.0.1:${port}`, secure: false, hostname: "127.0.0.1", port, basePath: "" };
    try {
      const stream = await openStreamSocket({ endpoint, tls: agentTls({}), open: new Set() }, request);
      assert.equal(stream.head.status, 200);
      assert.equal(stream.head.headers["content-type"], "application/json");
      assert.equal(await bodyOf(stream), "abcdef");
    } finally {
      raw.close();
    }
  });
});

void describe("framing, fed byte by byte", () => {
  const feedAll = (head: string, bytes: Buffer, split: number): { body: string; done: boolean } => {
    const framing = framingFor(parseHead(head));
    let body = "";
    const sink: BodySink = {
      data: (b) => (body += b.toString("latin1")),
      end: () => undefined,
      error: () => undefined,
    };
    let done = false;
    for (let at = 0; at < bytes.length && !done; at += split) done = framing.feed(bytes.subarray(at, at + split), sink);
    return { body, done };
  };

  void it("decodes chunked bodies with extensions and trailers at every split size", () => {
    const wire = Buffer.from("5;ext=1\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: y\r\n\r\n");
    for (const split of [1, 2, 3, 7, 64]) {
      const { body, done } = feedAll("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked", wire, split);
      assert.equal(body, "hello 0123456789", `split ${split}`);
      assert.equal(done, true, `split ${split}`);
    }
  });

  void it("refuses malformed framing", () => {
    assert.throws(
      () => feedAll("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked", Buffer.from("zz\r\n"), 1),
      /chunk size/,
    );
    assert.throws(
      () => feedAll("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked", Buffer.from("1\r\nab\r\n"), 64),
      /CRLF/,
    );
    assert.throws(() => parseHead("SSH-2.0-OpenSSH"), /not an HTTP\/1.1 response/);
    assert.throws(() => framingFor(parseHead("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip")), /unsupported/);
    assert.throws(() => framingFor(parseHead("HTTP/1.1 200 OK\r\nContent-Length: -1")), /content-length/);
  });

  void it("ends a length-delimited body at its length", () => {
    const { body, done } = feedAll("HTTP/1.1 410 Gone\r\nContent-Length: 4", Buffer.from("abcdEXTRA"), 3);
    assert.equal(body, "abcd");
    assert.equal(done, true);
  });
});
