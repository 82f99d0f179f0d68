/**
 * The render server's wire format, over a unix socket, one request per connection: the reconciler
 * writes one JSON line; the server answers one JSON line, followed on success by the rendered files'
 * bytes in the order the line lists them. Output travels as bytes, not as a path to a shared folder,
 * so the reconciler never follows a path (or a symlink) that code run by a render chose.
 */
import type { Socket } from "node:net";

export interface RenderRequest {
  /** The sync directory, under the server's source root (the checkout volume, read-only there). */
  readonly dir: string;
  /** The checkout holding `dir`: every file the kustomization names must resolve inside it. */
  readonly repositoryRoot: string;
  readonly enableShell: boolean;
  /** How long the render may take; the server caps it at its own maximum. */
  readonly deadlineMs: number;
}

export type RenderResponse =
  | { readonly ok: true; readonly files: readonly { readonly name: string; readonly bytes: number }[] }
  | { readonly ok: false; readonly message: string; readonly retry?: true };

/** A request is a path and two settings: anything longer is not one. */
export const maxRequestBytes = 64 * 1024;
/** The answer's line: a list of files, or an error message (kustomize's output, cut to fit). */
export const maxResponseLineBytes = 1024 * 1024;
export const maxMessageChars = 256 * 1024;
/** Rendered output above this is refused (render.ts holds kustomize's output to the same bound). */
export const maxOutputBytes = 256 * 1024 * 1024;
/** A rendered file's name: one plain path segment, never a path. */
export const fileNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Reads one line from `socket` (at most `max` bytes); resolves with it and whatever bytes followed
 * in the same chunks. Rejects when the socket ends first or the line is too long.
 */
export function readLine(socket: Socket, max: number): Promise<{ line: string; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("error", onError);
      socket.off("close", onEnd);
    };
    const onData = (chunk: Buffer): void => {
      const newline = chunk.indexOf(0x0a);
      if (newline >= 0 && size + newline <= max) {
        done();
        socket.pause();
        chunks.push(chunk.subarray(0, newline));
        resolve({ line: Buffer.concat(chunks).toString("utf8"), rest: chunk.subarray(newline + 1) });
        return;
      }
      size += chunk.length;
      chunks.push(chunk);
      if (size > max) {
        done();
        reject(new Error(`a line longer than ${max} bytes`));
      }
    };
    const onEnd = (): void => {
      done();
      reject(new Error("the connection ended before a full line"));
    };
    const onError = (error: Error): void => {
      done();
      reject(error);
    };
    socket.on("data", onData);
    socket.once("end", onEnd);
    socket.once("close", onEnd);
    socket.once("error", onError);
    socket.resume();
  });
}

/** Parses a request line into typed values, or says what is wrong with it. */
export function parseRenderRequest(line: string): RenderRequest | string {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return "the request is not JSON";
  }
  if (typeof raw !== "object" || raw === null) return "the request is not an object";
  const { dir, repositoryRoot, enableShell, deadlineMs } = raw as Record<string, unknown>;
  if (typeof dir !== "string" || dir === "") return "the request has no dir";
  if (typeof repositoryRoot !== "string" || repositoryRoot === "") return "the request has no repositoryRoot";
  if (typeof enableShell !== "boolean") return "the request's enableShell is not a boolean";
  if (typeof deadlineMs !== "number" || !Number.isFinite(deadlineMs) || deadlineMs <= 0)
    return "the request's deadlineMs is not a positive number";
  return { dir, repositoryRoot, enableShell, deadlineMs };
}

/** Parses a response line; anything malformed is an error message. */
export function parseRenderResponse(line: string): RenderResponse {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, message: "the render server answered something that is not JSON" };
  }
  const r = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  if (r["ok"] === false && typeof r["message"] === "string")
    return { ok: false, message: r["message"], ...(r["retry"] === true ? { retry: true } : {}) };
  if (r["ok"] !== true || !Array.isArray(r["files"]))
    return { ok: false, message: "the render server's answer has neither files nor an error" };
  const files: { name: string; bytes: number }[] = [];
  let total = 0;
  for (const f of r["files"] as unknown[]) {
    const { name, bytes } = (typeof f === "object" && f !== null ? f : {}) as Record<string, unknown>;
    if (typeof name !== "string" || !fileNamePattern.test(name) || files.some((g) => g.name === name))
      return {
        ok: false,
        message: `the render server named a file ${JSON.stringify(name)}, which is not a plain name`,
      };
    if (typeof bytes !== "number" || !Number.isSafeInteger(bytes) || bytes < 0)
      return { ok: false, message: `the render server gave ${name} no valid size` };
    total += bytes;
    files.push({ name, bytes });
  }
  if (total > maxOutputBytes)
    return { ok: false, message: `the rendered output is ${total} bytes, above the limit of ${maxOutputBytes}` };
  return { ok: true, files };
}
