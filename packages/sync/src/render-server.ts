/**
 * The render server: runs `kustomize build` for the reconciler of its pod, in a container of its own
 * that holds no ServiceAccount token and no Redis credential (Config Sync's hydration-controller).
 * Code a repository runs while rendering (exec functions, with enableShellInRendering) runs here,
 * beside nothing worth taking. One request per connection (render-protocol.ts).
 */
import { once } from "node:events";
import { open, readdir, realpath, rm, stat } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { isAbsolute, join, relative, sep } from "node:path";
import { DriftlessError, ErrorClass } from "@driftless/api";
import {
  fileNamePattern,
  maxMessageChars,
  maxOutputBytes,
  maxRequestBytes,
  parseRenderRequest,
  readLine,
  type RenderRequest,
  type RenderResponse,
} from "./render-protocol.ts";
import { removeRendered, renderKustomization, type RenderTools } from "./render.ts";
import type { Renderer } from "./rendering.ts";
import type { Logger } from "./log.ts";

export interface RenderServerOptions {
  readonly socketPath: string;
  /** Requests may name directories under here only: the checkout volume. */
  readonly sourceRoot: string;
  readonly tools: RenderTools;
  /** A request's deadline is capped at this (default 10 minutes). */
  readonly maxDeadlineMs?: number;
  /** Renders at once; one more is refused as busy (a pod's reconciler asks for one at a time). */
  readonly maxConcurrent?: number;
  readonly render?: Renderer;
  readonly log?: Logger;
}

export interface RenderServer {
  readonly socketPath: string;
  close(): Promise<void>;
}

export async function serveRenders(options: RenderServerOptions): Promise<RenderServer> {
  const sourceRoot = await realpath(options.sourceRoot);
  const render = options.render ?? renderKustomization;
  const maxDeadlineMs = options.maxDeadlineMs ?? 600_000;
  const maxConcurrent = options.maxConcurrent ?? 2;
  const sockets = new Set<Socket>();
  let running = 0;

  const handle = async (socket: Socket): Promise<void> => {
    const { line } = await readLine(socket, maxRequestBytes);
    const request = parseRenderRequest(line);
    if (typeof request === "string") return answer(socket, { ok: false, message: request });
    if (running >= maxConcurrent)
      return answer(socket, {
        ok: false,
        message: `the render server is busy (${maxConcurrent} renders running)`,
        retry: true,
      });
    const refusal =
      (await outsideRoot(request.dir, sourceRoot)) ?? (await outsideRoot(request.repositoryRoot, sourceRoot));
    if (refusal !== undefined) return answer(socket, { ok: false, message: refusal });
    running++;
    try {
      await renderAndSend(socket, request);
    } finally {
      running--;
    }
  };

  const renderAndSend = async (socket: Socket, request: RenderRequest): Promise<void> => {
    // A reconciler that goes away (its pass aborted, its deadline passed) stops the render.
    const gone = new AbortController();
    socket.once("close", () => gone.abort(new Error("the reconciler closed the connection")));
    const deadlineMs = Math.min(request.deadlineMs, maxDeadlineMs);
    const signal = AbortSignal.any([gone.signal, AbortSignal.timeout(deadlineMs)]);
    let out: string;
    try {
      out = await render(request.dir, {
        tools: options.tools,
        repositoryRoot: request.repositoryRoot,
        enableShell: request.enableShell,
        signal,
      });
    } catch (error) {
      const timedOut = signal.aborted && signal.reason instanceof DOMException && signal.reason.name === "TimeoutError";
      const message = timedOut
        ? `rendering ${request.dir} took longer than ${Math.round(deadlineMs / 1000)} s and was stopped`
        : error instanceof Error
          ? error.message
          : String(error);
      // The class travels with the message: a render in this container retries as one in the reconciler's would.
      const retry = timedOut || (error instanceof DriftlessError && error.errorClass === ErrorClass.Retry);
      return answer(socket, { ok: false, message, ...(retry ? { retry } : {}) });
    }
    try {
      await sendFiles(socket, out);
    } finally {
      await removeRendered(out);
    }
  };

  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    // A reconciler that hangs up mid-answer makes writes fail (EPIPE): that ends this request only.
    socket.on("error", () => socket.destroy());
    handle(socket).catch((error: unknown) => {
      options.log?.warn("render request failed", { error: error instanceof Error ? error.message : String(error) });
      socket.destroy();
    });
  });
  // A socket left by a previous run of this container would make listen fail with EADDRINUSE.
  await rm(options.socketPath, { force: true });
  server.listen(options.socketPath);
  await once(server, "listening");
  options.log?.info("serving renders", { socket: options.socketPath, sourceRoot });
  return {
    socketPath: options.socketPath,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** Why `dir` may not be rendered: not a directory under the source root once symlinks are resolved. */
async function outsideRoot(dir: string, sourceRoot: string): Promise<string | undefined> {
  if (!isAbsolute(dir)) return `the directory to render must be an absolute path, got ${JSON.stringify(dir)}`;
  const real = await realpath(dir).catch(() => undefined);
  const within = real !== undefined && (real === sourceRoot || relative(sourceRoot, real).split(sep)[0] !== "..");
  if (!within || real === undefined) return `${dir} is not a directory under the render server's source root`;
  if (!(await stat(real)).isDirectory()) return `${dir} is not a directory`;
  return undefined;
}

/** The answer line, then each output file's bytes. Sizes are taken first, so the line tells the truth. */
async function sendFiles(socket: Socket, out: string): Promise<void> {
  const files: { name: string; bytes: number }[] = [];
  let total = 0;
  for (const entry of await readdir(out, { withFileTypes: true })) {
    if (!entry.isFile() || !fileNamePattern.test(entry.name)) continue;
    const bytes = (await stat(join(out, entry.name))).size;
    total += bytes;
    files.push({ name: entry.name, bytes });
  }
  if (total > maxOutputBytes)
    return answer(socket, {
      ok: false,
      message: `the rendered output is ${total} bytes, above the limit of ${maxOutputBytes}`,
    });
  socket.write(`${JSON.stringify({ ok: true, files } satisfies RenderResponse)}\n`);
  for (const file of files) {
    if (file.bytes === 0) continue;
    const handle = await open(join(out, file.name));
    try {
      let left = file.bytes;
      for await (const chunk of handle.createReadStream({ start: 0, end: file.bytes - 1, autoClose: false })) {
        if (left <= 0) break;
        const piece = (chunk as Buffer).subarray(0, left);
        left -= piece.length;
        if (!socket.write(piece)) await drained(socket);
      }
    } finally {
      await handle.close();
    }
  }
  socket.end();
}

/** Waits until `socket` takes more, or fails if it closed meanwhile. */
async function drained(socket: Socket): Promise<void> {
  await new Promise((resolve) => {
    socket.once("drain", resolve);
    socket.once("close", resolve);
  });
  if (socket.destroyed) throw new Error("the reconciler closed the connection while the output was sent");
}

function answer(socket: Socket, response: RenderResponse): void {
  const cut: RenderResponse =
    response.ok || response.message.length <= maxMessageChars
      ? response
      : { ok: false, message: `${response.message.slice(0, maxMessageChars)}… (cut)` };
  socket.end(`${JSON.stringify(cut)}\n`);
}
