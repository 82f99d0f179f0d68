/**
 * A loopback port that accepts connections and never says a word: a Git server, registry or API server that
 * hangs, so a test can show what ends the wait (a deadline, a stop, a new spec) rather than a refused connection.
 */
import { createServer, type Socket } from "node:net";
import type { TestContext } from "node:test";

export interface SilentPort {
  readonly port: number;
  /** Connections taken so far: proof the client reached it and hung there. */
  readonly connections: () => number;
}

export async function silentPort(t: TestContext): Promise<SilentPort> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { port, connections: () => connections };
}
