import assert from "node:assert/strict";
import { test } from "node:test";
import { allowsPlainHttp, fallbackDelayMs, firstAnsweringScheme, type RegistryScheme } from "./registry-scheme.ts";

// What go-containerregistry's name.Registry.Scheme() answers ("http" = true) for each name, printed by its
// own rule (registry.go's regexps and isRFC1918, run with Go 1.26).
const goAnswers: Readonly<Record<string, boolean>> = {
  "127.0.0.1:5000": true,
  "127.0.0.1": true,
  "127.0.0.2:5000": false,
  localhost: false,
  "localhost:5000": true,
  "localhost.:5000": false,
  "foo.local": true,
  "foo.local:5000": true,
  "foo.localhost:5000": true,
  "foo.LOCAL:5000": false,
  "foo.local:123456": false,
  "foo.localdomain:5000": false,
  "[::1]:5000": true,
  "[::1]": true,
  "[fe80::1]:5000": true,
  "[2001:db8::1234]:443": true,
  "10.1.2.3:5000": true,
  "10.1.2.3": true,
  "010.1.2.3:5000": false,
  "172.16.0.1": true,
  "172.31.255.255:80": true,
  "172.32.0.1:80": false,
  "192.168.1.1:5000": true,
  "192.169.1.1": false,
  "11.0.0.1": false,
  "127.0.0.1.evil.example:5000": true,
  "registry.example": false,
  "10.0.0.1.evil.example:5000": false,
  "vm:5000": false,
  "gcr.io": false,
  "docker.io": false,
  "0.0.0.0:5000": false,
  "10.0.0.256:5000": false,
  "1.2.3.4": false,
};

test("plain HTTP is allowed for exactly the registry names go-containerregistry's Scheme() gives http", () => {
  for (const [name, http] of Object.entries(goAnswers)) assert.equal(allowsPlainHttp(name), http, name);
});

/** A probe whose answer per scheme is set by the test: "ok", "fail", or "hang" (until aborted). */
function probe(answers: Record<RegistryScheme, "ok" | "fail" | "hang">, asked: RegistryScheme[], aborted: string[]) {
  return (scheme: RegistryScheme, signal: AbortSignal): Promise<void> => {
    asked.push(scheme);
    signal.addEventListener("abort", () => aborted.push(scheme));
    const answer = answers[scheme];
    if (answer === "ok") return Promise.resolve();
    if (answer === "fail") return Promise.reject(new Error(`${scheme} failed`));
    // As a real request does, an attempt started on an aborted signal fails at once.
    if (signal.aborted) return Promise.reject(new Error("aborted"));
    return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
  };
}

test("https that answers wins without http being asked", async () => {
  const asked: RegistryScheme[] = [];
  assert.equal(await firstAnsweringScheme(probe({ https: "ok", http: "ok" }, asked, [])), "https");
  assert.deepEqual(asked, ["https"]);
});

test("http is asked at once when https fails, and wins when it answers", async () => {
  const asked: RegistryScheme[] = [];
  const started = Date.now();
  assert.equal(await firstAnsweringScheme(probe({ https: "fail", http: "ok" }, asked, [])), "http");
  assert.deepEqual(asked, ["https", "http"]);
  assert.ok(Date.now() - started < fallbackDelayMs, "no wait for the fallback delay after a failure");
});

test("an https that hangs is raced by http after the fallback delay, and aborted when http answers", async () => {
  const asked: RegistryScheme[] = [];
  const aborted: string[] = [];
  assert.equal(await firstAnsweringScheme(probe({ https: "hang", http: "ok" }, asked, aborted)), "http");
  assert.deepEqual([asked, aborted], [["https", "http"], ["https"]]);
});

test("both failing reject with the https error first, then the http one", async () => {
  await assert.rejects(
    firstAnsweringScheme(probe({ https: "fail", http: "fail" }, [], [])),
    (error: unknown) =>
      error instanceof AggregateError &&
      (error.errors as Error[]).map((e) => e.message).join(", ") === "https failed, http failed",
  );
});

test("the caller's abort ends both attempts", async () => {
  const controller = new AbortController();
  const pending = firstAnsweringScheme(probe({ https: "hang", http: "hang" }, [], []), controller.signal);
  controller.abort();
  await assert.rejects(pending, AggregateError);
});
