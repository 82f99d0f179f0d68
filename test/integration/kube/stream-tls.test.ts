/**
 * Watch streams over TLS with a client certificate (kubeconfigs from kubeadm and kind authenticate
 * that way; the local control plane uses a token): the stream socket presents the client's
 * certificate and checks the server's against the kubeconfig's CA. Certificates come from the
 * openssl CLI, as the git HTTPS tests make theirs.
 */
import assert from "node:assert/strict";
import https from "node:https";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { after, before, test } from "node:test";
import { agentTls } from "../../../packages/kube/src/agent.ts";
import { openStreamSocket, type OpenedStream, type StreamTarget } from "../../../packages/kube/src/stream-socket.ts";
import { hasOpenssl, selfSignedCert, type SelfSignedCert } from "../../../packages/git/src/testing/tls.ts";

// .ci/run installs openssl; elsewhere a machine without it skips rather than fails.
const skip = !(await hasOpenssl()) && process.env["CI"] === undefined ? "openssl is not installed" : false;

let dir: string;
let server: https.Server;
let serverCert: SelfSignedCert;
let clientCert: SelfSignedCert;
let port: number;

before(async () => {
  if (skip !== false) return;
  dir = await mkdtemp(join(tmpdir(), "driftless-stream-tls-"));
  serverCert = await selfSignedCert(dir, "127.0.0.1");
  clientCert = await selfSignedCert(dir, "10.9.8.7");
  server = https.createServer(
    { key: serverCert.key, cert: serverCert.cert, ca: clientCert.cert, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`${JSON.stringify({ client: peer.subject.CN })}\n`);
      res.end(`${JSON.stringify({ path: req.url })}\n`);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  if (skip !== false) return;
  server.closeAllConnections();
  server.close();
  await rm(dir, { recursive: true, force: true });
});

function target(tls: Parameters<typeof agentTls>[0]): StreamTarget {
  const endpoint = { server: `https://127.0.0.1:${port}`, secure: true, hostname: "127.0.0.1", port, basePath: "" };
  return { endpoint, tls: agentTls(tls), open: new Set() };
}

function bodyOf(stream: OpenedStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    stream.start({ data: (bytes) => (text += bytes.toString("utf8")), end: () => resolve(text), error: reject });
  });
}

const request = { path: "/api/v1/configmaps?watch=1", headers: {}, timeoutMs: 5000 };

test("a stream presents the kubeconfig's client certificate and trusts only its CA", { skip }, async () => {
  const stream = await openStreamSocket(
    target({ ca: serverCert.cert, cert: clientCert.cert, key: clientCert.key }),
    request,
  );
  assert.equal(stream.head.status, 200);
  const lines = (await bodyOf(stream))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, string>);
  assert.deepEqual(lines, [{ client: "10.9.8.7" }, { path: "/api/v1/configmaps?watch=1" }]);

  // Without the client certificate the server refuses the handshake.
  await assert.rejects(openStreamSocket(target({ ca: serverCert.cert }), request));
  // A server whose certificate the CA did not sign is refused by the client.
  await assert.rejects(
    openStreamSocket(target({ ca: clientCert.cert, cert: clientCert.cert, key: clientCert.key }), request),
    /self[- ]signed|unable to verify|certificate/i,
  );
  // ... unless the kubeconfig says insecure-skip-tls-verify.
  const insecure = await openStreamSocket(
    target({ cert: clientCert.cert, key: clientCert.key, rejectUnauthorized: false }),
    request,
  );
  assert.equal(insecure.head.status, 200);
  insecure.close();
});
