/** Decoding a watch response: newline-delimited JSON events, parsed as they arrive. */
import { asError, KubeApiError, KubeReason } from "./errors.ts";
import { peekWatchEventVersion } from "./json-peek.ts";
import { ReusedBufferLines } from "./ndjson.ts";
import type { OpenedStream } from "./stream-socket.ts";
import { asApiStatus, asKubeObject, isRecord, type TypeFill } from "./parse.ts";
import { WatchEventType, type WatchEvent } from "./types.ts";

/** One event line larger than this means the stream is broken, not that an object is big. */
const maxEventBytes = 64 * 1024 * 1024;

export class WatchIdleError extends Error {
  constructor(idleMs: number) {
    super(`the watch stream sent nothing for ${idleMs} ms`);
    this.name = "WatchIdleError";
  }
}

export interface ReadWatchOptions {
  readonly signal: AbortSignal;
  /** The stream is cut when it stays silent this long (a half-open connection). */
  readonly idleMs: number;
  readonly operation: string;
  /** See WatchOptions.isEcho. */
  readonly isEcho?: (resourceVersion: string) => boolean;
}

/** A response body delivered by pushes (stream-socket.ts), with flow control. */
export type BodySource = Pick<OpenedStream, "start" | "pause" | "resume">;

/**
 * Events decoded past this many waiting for the reader pause the socket: the server's writes then
 * wait in TCP rather than in our memory.
 */
const maxQueuedEvents = 512;

export async function* readWatchEvents(
  body: BodySource,
  fill: TypeFill,
  options: ReadWatchOptions,
): AsyncGenerator<WatchEvent, void, undefined> {
  const lines = new ReusedBufferLines();
  let queue: WatchEvent[] = [];
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const signal = (): void => {
    wake?.();
    wake = undefined;
  };
  const decode = (line: Buffer): void => {
    queue.push(eventOf(line, fill, options));
  };
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      failure ??= new WatchIdleError(options.idleMs);
      signal();
    }, options.idleMs);
  };
  arm();
  body.start({
    data: (bytes) => {
      if (failure !== undefined) return;
      arm();
      try {
        lines.push(bytes, decode);
        if (lines.pendingBytes > maxEventBytes)
          throw protocolError(options.operation, `an event line exceeds ${maxEventBytes} bytes`);
      } catch (error) {
        failure = asError(error);
      }
      if (queue.length >= maxQueuedEvents) body.pause();
      signal();
    },
    end: () => {
      try {
        lines.flush(decode);
      } catch (error) {
        failure ??= asError(error);
      }
      ended = true;
      signal();
    },
    error: (error) => {
      failure ??= error;
      signal();
    },
  });
  try {
    for (;;) {
      if (queue.length > 0) {
        const batch = queue;
        queue = [];
        body.resume();
        for (const event of batch) yield event;
        continue;
      }
      // Events decoded before a failure are delivered first: they happened.
      if (failure !== undefined) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** Bytes of an event decoded to look for its resourceVersion first: a built-in kind's sits well inside. */
const peekBytes = 1024;

function eventOf(line: Buffer, fill: TypeFill, options: ReadWatchOptions): WatchEvent {
  let text: string | undefined;
  if (options.isEcho !== undefined) {
    // Latin-1 of a prefix: JSON's structure and a resourceVersion are ASCII, and a multi-byte
    // character cut at the end of the prefix cannot be mistaken for either.
    let version = peekWatchEventVersion(line.toString("latin1", 0, Math.min(line.length, peekBytes)));
    if (version === undefined && line.length > peekBytes) {
      text = line.toString("utf8");
      version = peekWatchEventVersion(text);
    }
    if (version !== undefined && options.isEcho(version)) {
      return {
        type: WatchEventType.Bookmark,
        object: { apiVersion: fill.apiVersion, kind: fill.kind, metadata: { name: "", resourceVersion: version } },
      };
    }
  }
  return parseWatchEvent(text ?? line.toString("utf8"), fill, options.operation);
}

const objectEventTypes: ReadonlySet<string> = new Set([
  WatchEventType.Added,
  WatchEventType.Modified,
  WatchEventType.Deleted,
  WatchEventType.Bookmark,
]);

/** One line of a watch stream as a typed event. */
export function parseWatchEvent(line: string, fill: TypeFill, operation: string): WatchEvent {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw protocolError(operation, `a watch event is not JSON: ${line.slice(0, 200)}`);
  }
  if (!isRecord(value) || typeof value["type"] !== "string")
    throw protocolError(operation, `not a watch event: ${line.slice(0, 200)}`);
  const type = value["type"];
  if (type === WatchEventType.Error) {
    const status = asApiStatus(value["object"]) ?? {
      message: `an ERROR event without a Status: ${line.slice(0, 200)}`,
    };
    return { type: WatchEventType.Error, object: status };
  }
  if (!objectEventTypes.has(type)) throw protocolError(operation, `unknown watch event type ${type}`);
  const object = asKubeObject(value["object"], fill, { nameless: type === WatchEventType.Bookmark });
  if (object === undefined) throw protocolError(operation, `a ${type} event without an object: ${line.slice(0, 200)}`);
  return { type: type as "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK", object };
}

function protocolError(operation: string, message: string): KubeApiError {
  return new KubeApiError({ status: 200, reason: KubeReason.InvalidResponse, serverMessage: message, operation });
}
