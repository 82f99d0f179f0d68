/**
 * `driftless console`: serves the web console on loopback with the user's kubeconfig, prints its address
 * (which carries the per-run secret) and opens the browser unless told not to; runs until Ctrl-C.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { KubeClient } from "@driftless/kube";
import { escapeHtml } from "../console/html.ts";
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
  let openerPage: string | undefined;
  try {
    out(`driftless console: ${server.url}`);
    out("(the address carries a secret: do not share it; Ctrl-C stops the console)");
    if (options.open) {
      openerPage = await writeOpenerPage(server.url).catch((error: unknown) => {
        out(`(not opening the browser: ${error instanceof Error ? error.message : String(error)})`);
        return undefined;
      });
      if (openerPage !== undefined) openBrowser(openerPage);
    }
    await new Promise<void>((resolve) => {
      if (options.signal.aborted) return resolve();
      options.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    return 0;
  } finally {
    // Kept while the console runs: the opener may hand the file to a browser that reads it later.
    if (openerPage !== undefined) await rm(dirname(openerPage), { recursive: true, force: true });
    await server.close();
    client.close();
  }
}

/**
 * A page that sends the browser on to `url`, readable by the user alone (0600 in a 0700 folder): the
 * opener's command line, which `ps` shows every local user, then names the file, not the secret
 * (Jupyter opens its server the same way).
 */
async function writeOpenerPage(url: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-console-"));
  const path = join(dir, "open.html");
  const target = escapeHtml(url);
  const page =
    `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${target}">` +
    `<title>driftless console</title></head><body><a href="${target}">Open the driftless console</a></body></html>\n`;
  await writeFile(path, page, { mode: 0o600, flag: "wx" });
  return path;
}

/** The desktop's opener, given a file; without one the printed address is enough. */
function openBrowser(file: string): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [file]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", file]]
        : ["xdg-open", [file]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No opener: the address is printed.
  }
}
