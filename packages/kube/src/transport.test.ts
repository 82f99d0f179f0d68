/**
 * The transport's body handling against a local HTTP server: a caller that needs only the start of
 * a large answer gets that start, the rest is read and dropped, and the connection stays usable.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { agentTls } from "./agent.ts";
import { exchange, prefixScanBytes, type Transport } from "./transport.ts";

let server: http.Server;
let transport: Transport;
const sockets = new Set<unknown>();

/** An answer of `status` whose body is `head` followed by `tailBytes` of padding, sent in 16 KiB writes. */
function answer(status: number, head: string, tailBytes: number): (res: http.ServerResponse) => void {
  return (res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.write(head);
    const piece = "x".repeat(16 * 1024);
    for (let sent = 0; sent < tailBytes; sent += piece.length) res.write(piece);
    res.end();
  };
}

let respond: (res: http.ServerResponse) => void = (res) => res.end();

before(async () => {
  server = http.createServer((req, res) => {
    sockets.add(req.socket);
    req.resume();
    req.on("end", () => respond(res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const endpoint = { server: `http://127.0.0.1:${port}`, secure: false, hostname: "127.0.0.1", port, basePath: "" };
  transport = {
    endpoint,
    agent,
    stream: { endpoint, tls: agentTls({}), open: new Set() },
  };
});

after(() => {
  transport.agent.destroy();
  server.closeAllConnections();
  server.close();
});

const request = { method: "PUT", path: "/x", headers: {}, body: "{}", timeoutMs: 10_000 };
const startsWithHead = (prefix: Buffer): boolean => prefix.toString("latin1").includes('"end-of-head"');

void describe("exchange with prefixSuffices", () => {
  void it("keeps only the start of a large answer once it suffices, and the connection stays usable", async () => {
    sockets.clear();
    respond = answer(200, '{"metadata":{"name":"end-of-head"},"spec":"', 3 * 1024 * 1024);
    const raw = await exchange(transport, { ...request, prefixSuffices: startsWithHead });
    assert.equal(raw.status, 200);
    assert.ok(raw.body.length <= prefixScanBytes, `kept ${raw.body.length} bytes of a 3 MiB answer`);
    assert.ok(raw.body.toString().startsWith('{"metadata":{"name":"end-of-head"}'));
    respond = answer(200, "{}", 0);
    assert.equal((await exchange(transport, request)).body.toString(), "{}");
    assert.equal(sockets.size, 1, "the dropped rest was read, so the keep-alive connection was reused");
  });

  void it("keeps the whole answer when its start never suffices", async () => {
    respond = answer(200, '{"spec":"', 256 * 1024);
    const raw = await exchange(transport, { ...request, prefixSuffices: startsWithHead });
    assert.ok(raw.body.length > 256 * 1024);
  });

  void it("keeps an error answer whole, whatever the caller needs of a success", async () => {
    respond = answer(409, '{"kind":"Status","message":"end-of-head ', 128 * 1024);
    const raw = await exchange(transport, { ...request, prefixSuffices: startsWithHead });
    assert.equal(raw.status, 409);
    assert.ok(raw.body.length > 128 * 1024);
  });
});
