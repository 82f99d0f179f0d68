/**
 * `driftless console` refuses whoever does not hold its per-run secret, and writes that do not come
 * from its own pages: requests as other local users and other web pages would make them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { testEnv } from "../support/index.ts";
import { startConsole } from "../support/console.ts";

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function call(
  port: number,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: init.method ?? "GET",
        headers: { host: `127.0.0.1:${port}`, ...init.headers },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}

test("a request without the console's secret is refused, and so are foreign hosts, wrong tokens and cross-origin writes", async (t) => {
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig);
  const port = console.port;
  const token = new URL(console.url).searchParams.get("token") ?? "";
  assert.ok(token.length >= 32);

  for (const path of [
    "/",
    "/live?view=/",
    "/syncs/rootsync/config-management-system/root-sync",
    "/static/console.js",
  ]) {
    const answer = await call(port, path);
    assert.equal(answer.status, 401, path);
  }
  assert.equal((await call(port, "/?token=wrong")).status, 403);
  assert.equal((await call(port, `/?token=${token.slice(0, -1)}`)).status, 403);

  // The secret, once, for a cookie and a clean address.
  const signIn = await call(port, `/?token=${token}`);
  assert.equal(signIn.status, 303);
  assert.equal(signIn.headers["location"], "/");
  const cookie = String(signIn.headers["set-cookie"]).split(";")[0] ?? "";
  assert.match(String(signIn.headers["set-cookie"]), /HttpOnly/);
  assert.match(String(signIn.headers["set-cookie"]), /SameSite=Strict/);

  const home = await call(port, "/", { headers: { cookie } });
  assert.equal(home.status, 200);
  assert.match(String(home.headers["content-security-policy"]), /default-src 'self'/);
  assert.match(String(home.headers["content-security-policy"]), /frame-ancestors 'none'/);
  assert.equal(home.headers["x-frame-options"], "DENY");
  const csrf = /data-csrf="([^"]+)"/.exec(home.body)?.[1] ?? "";
  assert.notEqual(csrf, "");

  // DNS rebinding: the right cookie under a foreign name.
  assert.equal((await call(port, "/", { headers: { cookie, host: `evil.example:${port}` } })).status, 403);

  const action = "/syncs/reposync/default/nothing-here/suspend";
  const form = { "content-type": "application/x-www-form-urlencoded" };
  // No CSRF token; a wrong one; another origin with the right one; no cookie with the right one.
  assert.equal((await call(port, action, { method: "POST", headers: { cookie, ...form }, body: "" })).status, 403);
  assert.equal(
    (await call(port, action, { method: "POST", headers: { cookie, ...form }, body: "csrf=x" })).status,
    403,
  );
  const foreign = { cookie, ...form, origin: "http://evil.example" };
  assert.equal((await call(port, action, { method: "POST", headers: foreign, body: `csrf=${csrf}` })).status, 403);
  assert.equal((await call(port, action, { method: "POST", headers: form, body: `csrf=${csrf}` })).status, 401);
  // With everything right, the API server answers (no such sync: 404).
  const own = { cookie, ...form, origin: `http://127.0.0.1:${port}`, "x-driftless-csrf": csrf };
  const answered = await call(port, action, { method: "POST", headers: own, body: "" });
  assert.equal(answered.status, 404, answered.body);
});
