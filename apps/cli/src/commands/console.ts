/**
 * `driftless console`: serves the web console on loopback with the user's kubeconfig, prints its address
 * (which carries the per-run secret) and opens the browser unless told not to; runs until Ctrl-C.
 */
import { spawn } from "node:child_process";
import { KubeClient } from "@driftless/kube";
import { ConsoleServer } from "../console/server.ts";

export interface ConsoleCommandOptions {
  readonly kubeconfig: string | undefined;
  readonly namespace?: string;
  readonly port: number;
  readonly open: boolean;
  readonly signal: AbortSignal;
}

export async function consoleCommand(options: ConsoleCommandOptions, out: (line: string) => void): Promise<number> {
  const client = await KubeClient.fromKubeconfig(options.kubeconfig);
  const server = await ConsoleServer.start({
    client,
    port: options.port,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
  });
  try {
    out(`driftless console: ${server.url}`);
    out("(the address carries a secret: do not share it; Ctrl-C stops the console)");
    if (options.open) openBrowser(server.url);
    await new Promise<void>((resolve) => {
      if (options.signal.aborted) return resolve();
      options.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    return 0;
  } finally {
    await server.close();
    client.close();
  }
}

/** The desktop's opener; without one the printed address is enough. */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No opener: the address is printed.
  }
}
