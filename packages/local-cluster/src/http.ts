import { request } from "node:https";

export interface ApiRequest {
  readonly server: string;
  readonly ca: string;
  readonly token: string;
  readonly method: string;
  readonly path: string;
  readonly body?: string;
  readonly contentType?: string;
  readonly timeoutMs?: number;
}

export interface ApiResponse {
  readonly status: number;
  readonly body: string;
}

/** One request to the local kube-apiserver. Rejects on network errors and timeouts, never on HTTP status. */
export function apiRequest(req: ApiRequest): Promise<ApiResponse> {
  return new Promise((resolveResponse, reject) => {
    const url = new URL(req.path, req.server);
    const headers: Record<string, string> = { authorization: `Bearer ${req.token}`, accept: "application/json" };
    if (req.body !== undefined) headers["content-type"] = req.contentType ?? "application/json";
    const r = request(url, { method: req.method, ca: req.ca, headers, timeout: req.timeoutMs ?? 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolveResponse({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    r.on("timeout", () =>
      r.destroy(new Error(`timeout after ${req.timeoutMs ?? 10_000} ms: ${req.method} ${req.path}`)),
    );
    r.on("error", reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}
