/** Reads a webhook request body within a size limit: memory per request is bounded before any signature check. */
import type { IncomingMessage } from "node:http";

export class BodyTooLarge extends Error {}
/** The client went away (or was cut at the read deadline) before the body ended. */
export class BodyIncomplete extends Error {}

export function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(request.headers["content-length"] ?? 0) > maxBytes) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      // Stop reading and keeping it; the caller answers 413 and closes the connection.
      chunks.length = 0;
      request.off("data", onData);
      request.pause();
      reject(new BodyTooLarge());
    };
    request.on("data", onData);
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", () => reject(new BodyIncomplete()));
    request.on("close", () => {
      if (!request.complete) reject(new BodyIncomplete());
    });
  });
}
