/**
 * A reconciler that meets an error nothing caught logs it as one redacted JSON line and exits 1, instead of
 * Node's own report, which prints the message as it is: a repository URL in it may carry a token.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildReconcilerBundle, syncedBundledReconciler } from "../support/bundled-reconciler.ts";

const token = "crash-token-8c1f";

/**
 * Loaded before the bundle: on SIGUSR2, an error nobody catches, thrown or rejected as $CRASH_AS says. The
 * token is built at run time: the stack names this source, which must not hold it.
 */
const crashOnSignal = `data:text/javascript,${encodeURIComponent(
  `process.on("SIGUSR2", () => { const error = new Error("fetch of https://git-user:" + ${JSON.stringify(token.split(""))}.join("") + "@git.example.invalid/team.git failed"); ` +
    `if (process.env.CRASH_AS === "throw") setImmediate(() => { throw error; }); else void Promise.reject(error); });`,
)}`;

for (const [crashAs, message] of [
  ["throw", "uncaught exception"],
  ["reject", "unhandled promise rejection"],
] as const) {
  test(`an error nobody caught (${crashAs}) is logged redacted, as JSON, and the reconciler exits 1`, async (t) => {
    buildReconcilerBundle();
    const { namespace, reconciler } = await syncedBundledReconciler(t, {
      nodeFlags: [`--import=${crashOnSignal}`],
      env: { CRASH_AS: crashAs },
    });

    reconciler.child.kill("SIGUSR2");
    assert.equal(await reconciler.exited, 1, reconciler.output().slice(-2000));
    const output = reconciler.output();
    assert.ok(!output.includes(token), `the token reached the log:\n${output.slice(-2000)}`);
    const crash = output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((entry) => entry["msg"] === message);
    assert.ok(crash !== undefined, `no "${message}" line in:\n${output.slice(-2000)}`);
    assert.equal(crash["level"], "error");
    assert.match(String(crash["error"]), /fetch of https:\/\/.*@git\.example\.invalid\/team\.git failed/);
    assert.equal(crash["sync"], `RepoSync/${namespace}/repo-sync`);
  });
}
