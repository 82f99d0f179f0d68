/**
 * `driftless console` opening the browser: the opener's command line, which `ps` shows every local user,
 * must not carry the secret. A stand-in `xdg-open` first on PATH records what it was given.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { access, chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findRepoRoot } from "@driftless/local-cluster";
import { eventually, testEnv, removeAfter } from "../support/index.ts";
import { launchChromium } from "../support/browser.ts";

const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");

/** An `xdg-open` that writes its arguments, the file's mode and the file's text into `record`. */
const recordingOpener = `#!/bin/sh
stat -c %a "$1" > "$RECORD/mode.tmp"
cat "$1" > "$RECORD/page.tmp" 2>/dev/null
printf '%s\\n' "$@" > "$RECORD/args.tmp"
mv "$RECORD/mode.tmp" "$RECORD/mode"; mv "$RECORD/page.tmp" "$RECORD/page"; mv "$RECORD/args.tmp" "$RECORD/args"
`;

test("the browser is opened on a 0600 page that redirects to the console, never with the secret on the opener's command line, and the page is removed when the console stops", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "console-open-"));
  removeAfter(t, dir);
  await writeFile(join(dir, "xdg-open"), recordingOpener);
  await chmod(join(dir, "xdg-open"), 0o755);
  const env = { ...process.env, PATH: `${dir}:${process.env["PATH"] ?? ""}`, RECORD: dir };
  const child = spawn(process.execPath, [cli, "console", "--kubeconfig", testEnv().kubeconfig], {
    stdio: ["ignore", "pipe", "pipe"],
    env,
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  t.after(() => (child.exitCode === null ? child.kill("SIGINT") : undefined));

  let args = "";
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`driftless console exited ${child.exitCode}: ${out}`);
      args = await readFile(join(dir, "args"), "utf8").catch(() => "");
      return args !== "";
    },
    { what: "the opener to run" },
  );
  const url = /driftless console: (http:\/\/\S+)/.exec(out)?.[1] ?? "";
  assert.notEqual(url, "");
  const secret = /[A-Za-z0-9_-]{40,}/.exec(url)?.[0] ?? "";
  assert.notEqual(secret, "", url);
  assert.doesNotMatch(args, new RegExp(secret), "the secret on the opener's command line");
  const file = args.trim();
  assert.match(file, /\.html$/);
  assert.equal((await readFile(join(dir, "mode"), "utf8")).trim(), "600");
  const page = await readFile(join(dir, "page"), "utf8");
  assert.ok(page.includes(`content="0;url=${url.replaceAll("&", "&amp;")}"`), page);

  // A browser given the page lands on the console, signed in.
  const chromium = await launchChromium();
  t.after(() => chromium.close());
  const browser = await (await chromium.newContext()).newPage();
  await browser.goto(`file://${file}`);
  await eventually(async () => (await browser.title()) === "Syncs - driftless console", { what: "the console's page" });
  assert.equal(browser.url(), url);

  child.kill("SIGINT");
  await exited;
  await assert.rejects(access(file), "the page with the secret outlives the console");
});
