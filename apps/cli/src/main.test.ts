import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";

const main = join(import.meta.dirname, "main.ts");

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI as a user runs it, in `cwd`, with no kubeconfig to read. */
function driftless(cwd: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, ...args],
      { cwd, env: { ...process.env, KUBECONFIG: join(cwd, "no-kubeconfig") } },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

async function source(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-main-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: shop}\n");
  return dir;
}

// Checked against nomos v1.22 (`--no-api-server-check`) and Config Sync's e2e/testcases/cli_test.go.
void describe("vet and hydrate fail as nomos fails: `Error: ...` on stderr, exit 1", () => {
  void it("vet --namespace with --source-format hierarchy", async (t) => {
    const dir = await source(t);
    const run = await driftless(dir, "vet", "--namespace", "tenant-a", "--source-format", "hierarchy");
    assert.equal(run.code, 1, run.stderr);
    assert.equal(
      run.stderr,
      "Error: if --namespace is provided, --source-format must be omitted or set to unstructured\n",
    );
  });

  void it("hydrate --format xml", async (t) => {
    const dir = await source(t);
    const run = await driftless(dir, "hydrate", "--no-api-server-check", "--format", "xml");
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr, 'Error: format argument must be "yaml" or "json"\n');
  });

  void it("a flag it does not know, with the verb's usage", async (t) => {
    const dir = await source(t);
    const run = await driftless(dir, "vet", "--bogus");
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /^Error: unknown flag: --bogus\nusage:\n {2}driftless vet /);
  });

  void it("an unknown command exits 1 too; a driftless verb used wrongly keeps exit 2 with its usage", async (t) => {
    const dir = await source(t);
    const unknown = await driftless(dir, "bogus");
    assert.equal(unknown.code, 1, unknown.stderr);
    assert.match(unknown.stderr, /^driftless: unknown command "bogus" for "driftless"\n/);
    const wrong = await driftless(dir, "suspend", "deployment/x");
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.match(wrong.stderr, /^driftless: .*"deployment" is not rootsync or reposync[^]*driftless suspend\|resume/);
  });

  void it("a driftless verb given a flag it does not know, or a flag without its value, exits 2 with its usage", async (t) => {
    const dir = await source(t);
    const unknown = await driftless(dir, "sync", "rootsync", "root-sync", "--wiat");
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(
      unknown.stderr,
      /^driftless: unknown flag: --wiat\nusage:\n {2}driftless sync rootsync\|reposync NAME/,
    );
    const missing = await driftless(dir, "sync", "rootsync", "root-sync", "--wait", "--timeout");
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /^driftless: flag needs an argument: --timeout\nusage:/);
    const short = await driftless(dir, "status", "-o");
    assert.equal(short.code, 2, short.stderr);
    assert.match(short.stderr, /^driftless: flag needs an argument: --output\nusage:\n {2}driftless status /);
    // A command driftless does not have stays an unknown command (exit 1), with a flag or without.
    const unknownCommand = await driftless(dir, "foo", "--bar");
    assert.equal(unknownCommand.code, 1, unknownCommand.stderr);
  });
});

void describe("a flag the verb does not take is refused, as cobra refuses a flag its command does not define", () => {
  void it("vet and hydrate as nomos: `Error: unknown flag`, the usage, exit 1 (a one-letter form in cobra's words)", async (t) => {
    const dir = await source(t);
    const watch = await driftless(dir, "vet", "--watch");
    assert.equal(watch.code, 1, watch.stderr);
    assert.match(watch.stderr, /^Error: unknown flag: --watch\nusage:\n {2}driftless vet /);
    const namespace = await driftless(dir, "hydrate", "--namespace", "shop");
    assert.equal(namespace.code, 1, namespace.stderr);
    assert.match(namespace.stderr, /^Error: unknown flag: --namespace\nusage:\n {2}driftless hydrate /);
    // cobra's `--flag=false` form of another verb's flag, which the rewrite for parseArgs drops.
    const negated = await driftless(dir, "vet", "--watch=false");
    assert.equal(negated.code, 1, negated.stderr);
    assert.match(negated.stderr, /^Error: unknown flag: --watch\nusage:\n {2}driftless vet /);
    const output = await driftless(dir, "vet", "-o", "out");
    assert.equal(output.code, 1, output.stderr);
    assert.match(output.stderr, /^Error: unknown shorthand flag: 'o' in -o\n/);
  });

  void it("driftless's own verbs: its usage and exit 2", async (t) => {
    const dir = await source(t);
    for (const [args, flag, verb] of [
      [["status", "--flat"], "--flat", "status"],
      [["status", "--path", "x"], "--path", "status"],
      [["suspend", "rootsync", "root-sync", "--wait"], "--wait", "suspend"],
      [["version", "--resources"], "--resources", "version"],
      [["diff", ".", "--name", "x"], "--name", "diff"],
    ] as const) {
      const run = await driftless(dir, ...args);
      assert.equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, new RegExp(`^driftless: unknown flag: ${flag}\nusage:\n {2}driftless ${verb}`));
    }
  });
});

void describe("vet --keep-output", () => {
  // nomos v1.22 writes defaultcluster/clusterrole_viewer.yaml for this fixture and exits 1.
  void it("writes the clusters that passed when one fails, exits 1, and prints each error once", async (t) => {
    const out = await mkdtemp(join(tmpdir(), "driftless-main-kept-"));
    t.after(() => rm(out, { recursive: true, force: true }));
    const fixture = join(import.meta.dirname, "..", "..", "..", "test", "fixtures", "hierarchy", "errors");
    const dir = join(fixture, "knv1029-cluster-specific-collision");
    const run = await driftless(dir, "vet", "--source-format", "hierarchy", "--keep-output", "--output", out);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr.match(/KNV1029/g)?.length, 1, run.stderr);
    assert.deepEqual(await readdir(out, { recursive: true }), [
      "defaultcluster",
      "defaultcluster/clusterrole_viewer.yaml",
    ]);
  });
});
