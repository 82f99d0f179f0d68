/**
 * The reconciler's side of the render server (render-server.ts): a Renderer that asks the pod's
 * render container to build a kustomization and writes the files it answers with into a folder of
 * the reconciler's own, laid out as renderKustomization's (removeRendered removes it).
 */
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { finished } from "node:stream/promises";
import { ErrorClass } from "@driftless/api";
import { maxResponseLineBytes, parseRenderResponse, readLine, type RenderRequest } from "./render-protocol.ts";
import { RenderingError, type RenderOptions } from "./render.ts";
import type { Renderer } from "./rendering.ts";

/**
 * The render container is not (yet, or no longer) listening: the pass is tried again. A RenderingError, so it
 * is reported on status.rendering as any failed render is.
 */
export class RenderServerUnavailableError extends RenderingError {
  constructor(socketPath: string, cause: unknown) {
    super(
      `the render server at ${socketPath} is not answering (its container, hydration-controller, may be starting or restarting): ${cause instanceof Error ? cause.message : String(cause)}`,
      cause,
      ErrorClass.Retry,
    );
  }
}

export interface RenderClientOptions {
  /** How long one render may take, beside the server's own cap (default 5 minutes). */
  readonly deadlineMs?: number;
}

/** Time the server gets beyond the render's deadline to say it stopped the render. */
const answerGraceMs = 5_000;

export function renderThroughServer(socketPath: string, client: RenderClientOptions = {}): Renderer {
  const deadlineMs = client.deadlineMs ?? 300_000;
  return async (dir: string, options: RenderOptions): Promise<string> => {
    const socket = await connect(socketPath, options.signal);
    const stop = (): void => {
      socket.destroy(options.signal.reason instanceof Error ? options.signal.reason : new Error("aborted"));
    };
    options.signal.addEventListener("abort", stop, { once: true });
    const timer = setTimeout(
      () =>
        socket.destroy(
          new RenderingError(
            `the render server did not answer within ${deadlineMs / 1000} s`,
            undefined,
            ErrorClass.Retry,
          ),
        ),
      deadlineMs + answerGraceMs,
    );
    try {
      const request: RenderRequest = {
        dir,
        repositoryRoot: options.repositoryRoot,
        enableShell: options.enableShell,
        deadlineMs,
      };
      socket.write(`${JSON.stringify(request)}\n`);
      const { line, rest } = await readLine(socket, maxResponseLineBytes).catch((error: unknown) => {
        if (options.signal.aborted) throw options.signal.reason;
        if (error instanceof RenderingError) throw error;
        throw new RenderingError(
          `the render server closed the connection without an answer (the hydration-controller container may have been restarted, e.g. out of memory: its limit is spec.override.resources for hydration-controller): ${error instanceof Error ? error.message : String(error)}`,
          error,
          ErrorClass.Retry,
        );
      });
      const response = parseRenderResponse(line);
      if (!response.ok)
        throw new RenderingError(response.message, undefined, response.retry ? ErrorClass.Retry : ErrorClass.Terminal);
      return await receiveFiles(socket, rest, response.files);
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", stop);
      socket.destroy();
    }
  };
}

function connect(socketPath: string, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path: socketPath, signal });
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", (error) =>
      reject(signal.aborted ? error : new RenderServerUnavailableError(socketPath, error)),
    );
  });
}

/** Writes the bytes that follow the answer line into a new folder, each file exactly as long as announced. */
async function receiveFiles(
  socket: Socket,
  first: Buffer,
  files: readonly { readonly name: string; readonly bytes: number }[],
): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), "driftless-render-"));
  const out = join(home, "rendered");
  try {
    await mkdir(out);
    let pending: Buffer = first;
    const chunks = socket[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    for (const file of files) {
      const sink = createWriteStream(join(out, file.name), { flags: "wx" });
      let left = file.bytes;
      while (left > 0) {
        if (pending.length === 0) {
          const next = await chunks.next();
          if (next.done === true)
            throw new RenderingError(`the render server ended the connection ${left} bytes short of ${file.name}`);
          pending = next.value;
        }
        const piece = pending.subarray(0, left);
        pending = pending.subarray(piece.length);
        left -= piece.length;
        if (!sink.write(piece)) await new Promise<void>((resolve) => sink.once("drain", () => resolve()));
      }
      sink.end();
      await finished(sink);
    }
    return out;
  } catch (error) {
    await rm(home, { recursive: true, force: true });
    throw error;
  }
}
