/**
 * Forwards one request of a plain-HTTP test proxy to the run's API server (TLS, its CA) and pipes the answer
 * back as it comes, a watch's head at once. The test proxies (recording, fault-injecting) differ only in what
 * they record and in how they fail when the API server cannot be reached.
 */
import type http from "node:http";
import https from "node:https";

const hopByHop = ["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"];

function without(headers: http.IncomingHttpHeaders, drop: readonly string[]): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !drop.includes(name.toLowerCase())));
}

export interface Forwarding {
  readonly upstream: URL;
  readonly agent: https.Agent;
  /** The API server's status as its answer's head arrives. */
  readonly answered: (status: number | undefined) => void;
  /** The API server could not be reached, or its answer broke off. */
  readonly failed: (res: http.ServerResponse) => void;
}

export function forwardToApiServer(req: http.IncomingMessage, res: http.ServerResponse, how: Forwarding): void {
  const out = https.request(
    {
      hostname: how.upstream.hostname,
      port: how.upstream.port,
      method: req.method,
      path: req.url,
      headers: { ...without(req.headers, [...hopByHop, "host"]), host: how.upstream.host },
      agent: how.agent,
    },
    (answer) => {
      how.answered(answer.statusCode);
      res.writeHead(answer.statusCode ?? 502, without(answer.headers, hopByHop));
      res.flushHeaders(); // a watch's head goes at once, before any event
      answer.on("aborted", () => res.destroy());
      answer.on("error", () => res.destroy());
      answer.pipe(res);
    },
  );
  out.on("error", () => how.failed(res));
  res.on("close", () => out.destroy());
  req.pipe(out);
}
