/**
 * `driftless console` refuses whoever does not hold its per-run secret, and writes that do not come
 * from its own pages: requests as other local users and other web pages would make them.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import { eventually, testEnv } from "../support/index.ts";
import { launchChromium } from "../support/browser.ts";
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

test("a request without the console's secret is refused, and so are foreign hosts, wrong secrets and cross-origin writes", async (t) => {
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig);
  const port = console.port;
  const base = new URL(console.url).pathname;
  const secret = /^\/s\/([^/]+)\/$/.exec(base)?.[1] ?? "";
  assert.ok(secret.length >= 32, console.url);

  for (const path of [
    "/",
    "/live?view=/",
    "/syncs/rootsync/config-management-system/root-sync",
    "/static/console.js",
  ]) {
    const answer = await call(port, path);
    assert.equal(answer.status, 401, path);
  }
  assert.equal((await call(port, "/s/wrong/")).status, 403);
  assert.equal((await call(port, `/s/${secret.slice(0, -1)}/`)).status, 403);
  assert.equal((await call(port, `/s/${secret.slice(0, -1)}/static/console.js`)).status, 403);
  // Without its slash, the prefix is sent on to its slash: the pages' links are relative to it.
  const bare = await call(port, `/s/${secret}`);
  assert.equal(bare.status, 308);
  assert.equal(bare.headers["location"], base);

  // The printed address is the page itself, no cookie: any client holding it gets the page.
  const home = await call(port, base);
  assert.equal(home.status, 200);
  assert.equal(home.headers["set-cookie"], undefined);
  assert.match(home.body, new RegExp(`<base href="${base}" />`));
  assert.match(String(home.headers["content-security-policy"]), /default-src 'self'/);
  assert.match(String(home.headers["content-security-policy"]), /frame-ancestors 'none'/);
  assert.equal(home.headers["x-frame-options"], "DENY");
  assert.equal(home.headers["referrer-policy"], "no-referrer");
  const csrf = /data-csrf="([^"]+)"/.exec(home.body)?.[1] ?? "";
  assert.notEqual(csrf, "");

  // DNS rebinding: the right secret under a foreign name.
  assert.equal((await call(port, base, { headers: { host: `evil.example:${port}` } })).status, 403);

  const action = `${base}syncs/reposync/default/nothing-here/suspend`;
  const form = { "content-type": "application/x-www-form-urlencoded" };
  const own = { ...form, origin: `http://127.0.0.1:${port}` };
  // No CSRF token; a wrong one; another origin or site with the right one; neither Origin nor
  // Sec-Fetch-Site with the right one (a client that is not a page of this console).
  assert.equal((await call(port, action, { method: "POST", headers: own, body: "" })).status, 403);
  assert.equal((await call(port, action, { method: "POST", headers: own, body: "csrf=x" })).status, 403);
  const foreign = { ...form, origin: "http://evil.example" };
  assert.equal((await call(port, action, { method: "POST", headers: foreign, body: `csrf=${csrf}` })).status, 403);
  const sameSite = { ...form, origin: "http://127.0.0.1:1", "sec-fetch-site": "same-site" };
  assert.equal((await call(port, action, { method: "POST", headers: sameSite, body: `csrf=${csrf}` })).status, 403);
  assert.equal((await call(port, action, { method: "POST", headers: form, body: `csrf=${csrf}` })).status, 403);
  // With everything right, the API server answers (no such sync: 404).
  const answered = await call(port, action, {
    method: "POST",
    headers: { ...own, "x-driftless-csrf": csrf },
    body: "",
  });
  assert.equal(answered.status, 404, answered.body);
});

test("the printed address answers the page to a client without a cookie jar (Node's fetch), as to a browser", async (t) => {
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig);
  const answer = await fetch(console.url);
  assert.equal(answer.status, 200, await answer.clone().text());
  assert.match(await answer.text(), /<title>Syncs - driftless console<\/title>/);
  // Past the cookie check either way: the sync's page, or its 404 page when no test has made that RootSync.
  const sync = await fetch(new URL("syncs/rootsync/config-management-system/root-sync", console.url));
  assert.ok([200, 404].includes(sync.status), String(sync.status));
  assert.match(await sync.text(), /driftless console<\/title>/);
});

test("a page on another loopback port that the user follows a link to learns nothing of the console's secret", async (t) => {
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig);
  const secret = /[A-Za-z0-9_-]{40,}/.exec(console.url)?.[0] ?? "";
  assert.notEqual(secret, "");
  // Another local user's server: any port of 127.0.0.1, recording what browsers send it.
  const seen: string[] = [];
  const evil = await listen((req, res) => {
    seen.push(`${req.method ?? ""} ${req.url ?? ""} ${JSON.stringify(req.headers)}`);
    res.writeHead(200, { "content-type": "text/html" });
    res.end(req.url === "/" ? "<script>fetch('/collect', { credentials: 'include' })</script>hello" : "ok");
  });
  // A page of yet another site with a link to it: the user clicks a link.
  const lure = await listen((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<a id="go" href="http://127.0.0.1:${evil}/">click</a>`);
  });
  const chromium = await launchChromium();
  t.after(() => chromium.close());
  const page = await (await chromium.newContext()).newPage();
  const opened = await page.goto(console.url);
  assert.equal(opened?.status(), 200);
  await page.locator("#live-status").waitFor();
  await page.goto(`http://localhost:${lure}/`);
  await page.click("#go");
  await eventually(async () => seen.some((line) => line.startsWith("GET /collect ")), {
    what: "the evil page's fetch",
  });
  assert.ok(seen.length >= 2);
  for (const line of seen) assert.doesNotMatch(line, new RegExp(secret), "the secret reached another port");
});

/** A loopback HTTP server on a free port, closed after the test; its port. */
async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const address = server.address();
  assert.ok(typeof address === "object" && address !== null);
  return address.port;
}
