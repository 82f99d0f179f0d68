/**
 * Raw loopback clients for tests of the per-connection limits: a socket that sends exactly what the
 * test writes (nothing, a partial request, a TLS handshake and no request), and when the server closed it.
 */
import { connect as connectTcp, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";

export interface RawClient {
  readonly socket: Socket;
  /** Everything the server sent so far, as latin1 text. */
  received(): string;
  /** Resolves when the socket is closed, with the milliseconds since it connected. */
  readonly closed: Promise<number>;
}

/**
 * Connects to 127.0.0.1:port; with `tls`, completes the handshake (trusting `tls.ca`) before resolving.
 * Without it, an HTTPS port sees a TCP connection that never starts its handshake.
 */
export async function connectRaw(port: number, tls?: { readonly ca: string }): Promise<RawClient> {
  const started = Date.now();
  const socket: Socket =
    tls === undefined ? connectTcp(port, "127.0.0.1") : connectTls({ port, host: "127.0.0.1", ca: tls.ca });
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
  // A reset from the server is a close too; the test looks at `closed`.
  socket.on("error", () => undefined);
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now() - started)));
  await new Promise<void>((resolve, reject) => {
    socket.once(tls === undefined ? "connect" : "secureConnect", () => resolve());
    socket.once("error", reject);
  });
  return { socket, received: () => text, closed };
}

/** The client's close time, or a failure naming `what` when the server has not closed it within `timeoutMs`. */
export async function closedWithin(client: RawClient, timeoutMs: number, what: string): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still open after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([client.closed, late]);
  } finally {
    clearTimeout(timer);
    client.socket.destroy();
  }
}
