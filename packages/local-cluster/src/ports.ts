import { createServer } from "node:net";

/** Asks the kernel for a free loopback port. There is a short race until the caller binds it; callers retry on start failure. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port: 0 }, () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error("local-cluster: could not read the port the kernel assigned"));
        return;
      }
      const port = address.port;
      server.close(() => resolvePort(port));
    });
  });
}
