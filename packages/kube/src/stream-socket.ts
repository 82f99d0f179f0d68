/**
 * Long-lived response streams (watches), read straight off a connection of their own into one
 * reused buffer (the socket's `onread`), instead of through Node's HTTP client.
 *
 * Why: Node's HTTP client hands every read to JavaScript as a new Buffer, whose memory lives outside
 * the V8 heap until a garbage collection notices its wrapper died. A watch resumed after a bulk write
 * replays ~10,000 events (16 MB at 10,000 ConfigMaps) in a burst, and those events are our own
 * writes, recognised from their first bytes and dropped without parsing: the heap allocates so little
 * that collections are rare, and the reconciler held 7-12 MB of dead read buffers at the end of every
 * bulk pass, its memory peak (docs/benchmarks.md). Here every byte passes through one 64 KiB buffer.
 *
 * A watch is one GET on a connection that is closed after it, so the HTTP/1.1 it needs is small: a
 * status line, headers, and a body framed by chunked encoding, a Content-Length, or the close.
 */
import type { OutgoingHttpHeaders } from "node:http";
import net from "node:net";
import tls from "node:tls";
import type { AgentTls } from "./agent.ts";
import type { Endpoint } from "./connection.ts";
import { asError } from "./errors.ts";
import { RequestTimeoutError } from "./transport.ts";

/** Where streams connect, and the open ones (closed with the client). */
export interface StreamTarget {
  readonly endpoint: Endpoint;
  readonly tls: AgentTls;
  readonly open: Set<net.Socket>;
}

export interface StreamRequest {
  /** Path and query, without the endpoint's base path. */
  readonly path: string;
  readonly headers: OutgoingHttpHeaders;
  readonly signal?: AbortSignal;
  /** How long to wait for the response head; 0 for no deadline. */
  readonly timeoutMs: number;
}

export interface StreamHead {
  readonly status: number;
  /** Header names in lower case; a repeated header's values joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
}

/** Receives a response body. */
export interface BodySink {
  /** Body bytes. Valid only during the call: their memory is reused for the next read. */
  data(bytes: Buffer): void;
  end(): void;
  error(error: Error): void;
}

export interface OpenedStream {
  readonly head: StreamHead;
  /** Starts delivering the body (bytes that arrived with the head first). Call once. */
  start(sink: BodySink): void;
  /** Stops reading from the socket (the server's writes wait in TCP) until resume(). */
  pause(): void;
  resume(): void;
  /** Closes the connection (idempotent); the sink hears nothing more. */
  close(): void;
}

export class StreamProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StreamProtocolError";
  }
}

/** The buffer every read of one connection lands in. */
const readBufferBytes = 64 * 1024;
/** A response head larger than this is not from an API server. */
const maxHeadBytes = 64 * 1024;
const headEnd = Buffer.from("\r\n\r\n");

/** Sends a GET and resolves once the response head has arrived. */
export function openStreamSocket(target: StreamTarget, request: StreamRequest): Promise<OpenedStream> {
  return new Promise<OpenedStream>((resolve, reject) => {
    const { signal } = request;
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    let head: Buffer = Buffer.alloc(0);
    let body: BodyFraming | undefined;
    let sink: BodySink | undefined;
    let early: Buffer[] = []; // body bytes that came before start(): copies
    let finished = false;
    let opened = false;
    /** The connection ended after the head but before start(): start() settles it. */
    let endedEarly = false;

    /** How the stream ended while no sink was there to hear it; start() tells the sink. */
    let outcome: { readonly error: Error | undefined } | undefined;
    const tell = (to: BodySink, error: Error | undefined): void => (error === undefined ? to.end() : to.error(error));
    const finish = (error: Error | undefined): void => {
      if (finished) return;
      finished = true;
      cleanup();
      socket.destroy();
      target.open.delete(socket);
      if (!opened) reject(error ?? new Error("the connection closed before the response head"));
      else if (sink !== undefined) tell(sink, error);
      else outcome = { error };
    };
    const onRead = (length: number, buffer: Buffer): boolean => {
      read(length, buffer);
      return true; // flow is controlled by pause() and resume()
    };
    const read = (length: number, buffer: Buffer): void => {
      if (finished) return;
      try {
        let bytes = buffer.subarray(0, length);
        if (body === undefined) {
          head = Buffer.concat([head, bytes]); // a head is a few hundred bytes, read once
          const at = head.indexOf(headEnd);
          if (at === -1) {
            if (head.length > maxHeadBytes) throw new StreamProtocolError(`a response head over ${maxHeadBytes} bytes`);
            return;
          }
          const parsed = parseHead(head.subarray(0, at).toString("latin1"));
          body = framingFor(parsed);
          bytes = head.subarray(at + headEnd.length);
          opened = true;
          if (timer !== undefined) clearTimeout(timer);
          // Nothing reads the body until start(): hold the socket, keep what came with the head.
          socket.pause();
          if (bytes.length > 0) early.push(Buffer.from(bytes));
          resolve(stream(parsed));
          return;
        }
        if (sink === undefined) {
          early.push(Buffer.from(bytes));
          return;
        }
        if (body.feed(bytes, sink)) finish(undefined);
      } catch (error) {
        finish(asError(error));
      }
    };

    let text: string;
    try {
      text = requestText(target, request);
    } catch (error) {
      reject(error);
      return;
    }
    const { endpoint } = target;
    const connectOptions = {
      host: endpoint.hostname,
      port: endpoint.port,
      onread: { buffer: Buffer.allocUnsafe(readBufferBytes), callback: onRead },
    };
    const socket: net.Socket = endpoint.secure
      ? tls.connect({ ...connectOptions, ...target.tls, servername: target.tls.servername ?? serverName(endpoint) })
      : net.connect(connectOptions);
    target.open.add(socket);
    socket.once(endpoint.secure ? "secureConnect" : "connect", () => socket.write(text));
    socket.on("error", (error) => finish(error));
    const ended = (): void => {
      if (opened && sink === undefined) endedEarly = true;
      else finish(body?.closeEnds() === true ? undefined : incomplete());
    };
    socket.on("end", ended);
    socket.on("close", () => {
      target.open.delete(socket);
      ended();
    });
    const onAbort = (): void => {
      const reason: unknown = signal?.reason;
      finish(reason instanceof Error ? reason : new Error("aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer =
      request.timeoutMs > 0
        ? setTimeout(() => finish(new RequestTimeoutError(request.timeoutMs)), request.timeoutMs)
        : undefined;
    const cleanup = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };

    const stream = (parsed: StreamHead): OpenedStream => ({
      head: parsed,
      start(to) {
        if (sink !== undefined) throw new Error("start() called twice");
        sink = to;
        if (outcome !== undefined) {
          tell(to, outcome.error); // aborted or timed out before anyone read
          return;
        }
        const held = early;
        early = [];
        try {
          for (const bytes of held) if (body?.feed(bytes, to) === true) return finish(undefined);
        } catch (error) {
          return finish(asError(error));
        }
        if (endedEarly) finish(body?.closeEnds() === true ? undefined : incomplete());
        else socket.resume();
      },
      pause: () => socket.pause(),
      resume: () => {
        if (sink !== undefined) socket.resume();
      },
      close: () => {
        sink = undefined;
        outcome = undefined;
        finish(undefined);
      },
    });
  });
}

function incomplete(): Error {
  return new Error("the connection closed before the response was complete");
}

function serverName(endpoint: Endpoint): string | undefined {
  // SNI carries host names only, never IP addresses (RFC 6066).
  return net.isIP(endpoint.hostname) === 0 ? endpoint.hostname : undefined;
}

function requestText(target: StreamTarget, request: StreamRequest): string {
  const { endpoint } = target;
  const host = endpoint.hostname.includes(":") ? `[${endpoint.hostname}]` : endpoint.hostname;
  let text = `GET ${endpoint.basePath}${request.path} HTTP/1.1\r\nHost: ${host}:${endpoint.port}\r\nConnection: close\r\n`;
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    const line = `${name}: ${Array.isArray(value) ? value.join(", ") : value}`;
    // A header value with a line break would let it write a second request.
    if (/[\r\n]/.test(line)) throw new StreamProtocolError(`header ${name} holds a line break`);
    text += `${line}\r\n`;
  }
  return text + "\r\n";
}

/** The status line and headers of a response head (without its blank line). */
export function parseHead(text: string): StreamHead {
  const lines = text.split("\r\n");
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? "");
  if (status === null)
    throw new StreamProtocolError(`not an HTTP/1.1 response: ${JSON.stringify((lines[0] ?? "").slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new StreamProtocolError(`a malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status: Number(status[1]), headers };
}

/** How a body's end is known, and its bytes taken out of the framing. */
export interface BodyFraming {
  /** Passes body bytes to the sink; true when the body is complete. */
  feed(bytes: Buffer, sink: BodySink): boolean;
  /** Whether the connection's end is a complete body. */
  closeEnds(): boolean;
}

export function framingFor(head: StreamHead): BodyFraming {
  const encoding = head.headers["transfer-encoding"];
  if (encoding !== undefined) {
    if (encoding.toLowerCase().split(",").at(-1)?.trim() !== "chunked")
      throw new StreamProtocolError(`unsupported transfer-encoding ${encoding}`);
    return new ChunkedBody();
  }
  const length = head.headers["content-length"];
  if (length !== undefined) {
    if (!/^\d+$/.test(length)) throw new StreamProtocolError(`a malformed content-length ${length}`);
    return new LengthBody(Number(length));
  }
  if (head.status === 204 || head.status === 304) return new LengthBody(0);
  return { feed: (bytes, sink) => (bytes.length > 0 && sink.data(bytes), false), closeEnds: () => true };
}

class LengthBody implements BodyFraming {
  #left: number;
  constructor(length: number) {
    this.#left = length;
  }
  feed(bytes: Buffer, sink: BodySink): boolean {
    const take = Math.min(this.#left, bytes.length);
    if (take > 0) sink.data(bytes.subarray(0, take));
    this.#left -= take;
    return this.#left === 0;
  }
  closeEnds(): boolean {
    return this.#left === 0;
  }
}

const lf = 0x0a;

/** RFC 9112 §7.1: hex size line (extensions ignored), data, CRLF; a zero size, trailers, blank line. */
class ChunkedBody implements BodyFraming {
  #state: "size" | "data" | "data-end" | "trailer" | "done" = "size";
  /** The size or trailer line being read (short lines, so a string is fine). */
  #line = "";
  #left = 0;

  feed(bytes: Buffer, sink: BodySink): boolean {
    let at = 0;
    while (at < bytes.length && this.#state !== "done") {
      if (this.#state === "data") {
        const take = Math.min(this.#left, bytes.length - at);
        sink.data(bytes.subarray(at, at + take));
        at += take;
        this.#left -= take;
        if (this.#left === 0) this.#state = "data-end";
        continue;
      }
      const newline = bytes.indexOf(lf, at);
      const end = newline === -1 ? bytes.length : newline;
      this.#line += bytes.toString("latin1", at, end);
      if (this.#line.length > 4096) throw new StreamProtocolError("a chunk size or trailer line over 4096 bytes");
      at = end;
      if (newline === -1) break;
      at++; // past the LF
      const line = this.#line.endsWith("\r") ? this.#line.slice(0, -1) : this.#line;
      this.#line = "";
      this.#endLine(line);
    }
    return this.#state === "done";
  }

  #endLine(line: string): void {
    if (this.#state === "data-end") {
      if (line !== "") throw new StreamProtocolError("a chunk not followed by CRLF");
      this.#state = "size";
    } else if (this.#state === "size") {
      const size = /^([0-9a-fA-F]{1,12})(?:\s*;.*)?\s*$/.exec(line);
      if (size === null)
        throw new StreamProtocolError(`a malformed chunk size line ${JSON.stringify(line.slice(0, 40))}`);
      this.#left = parseInt(size[1] ?? "0", 16);
      this.#state = this.#left === 0 ? "trailer" : "data";
    } else if (this.#state === "trailer" && line === "") {
      this.#state = "done";
    }
  }

  closeEnds(): boolean {
    return this.#state === "done";
  }
}
