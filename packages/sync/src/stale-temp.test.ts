import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { createLogger } from "./log.ts";
import { PrivateTmpdirEnv, removeOwnTempFolders, sweepStaleTempFolders, tmpdirIsPrivate } from "./stale-temp.ts";

const quiet = createLogger({}, { write: () => undefined });
let root: string;
let temp: string;
const systemTmp = process.env["TMPDIR"];

before(async () => {
  root = await mkdtemp(join(tmpdir(), "driftless-stale-temp-test-"));
});
after(async () => {
  if (systemTmp === undefined) delete process.env["TMPDIR"];
  else process.env["TMPDIR"] = systemTmp;
  await rm(root, { recursive: true, force: true });
});
beforeEach(async () => {
  temp = await mkdtemp(join(root, "tmp-"));
});

/** Folders named as the reconciler names them (mkdtemp), with a file inside as a render leaves one. */
async function leftByAKilledRun(dir: string): Promise<string[]> {
  const made = [
    await mkdtemp(join(dir, "driftless-render-")),
    await mkdtemp(join(dir, "driftless-render-")),
    await mkdtemp(join(dir, "driftless-git-auth-")),
  ];
  await mkdir(join(made[0]!, "rendered"));
  await writeFile(join(made[0]!, "rendered", "rendered.yaml"), "kind: ConfigMap\n");
  return made;
}

/** What others keep in a temp folder beside ours, some named much like ours. */
async function othersBeside(dir: string, outside: string): Promise<string[]> {
  const names = [
    "driftless", // the reconciler's default cache folder
    "driftless-manager-1000",
    "driftless-render-server-abc123", // a test's folder
    "driftless-render-pod-cache-Xy12Zq",
    "driftless-renderXabc12",
    "driftless-render-abc12", // five characters: not mkdtemp's
    "helm-123456",
  ];
  for (const name of names) await mkdir(join(dir, name));
  await writeFile(join(dir, "driftless-render-file01"), "a file, not a folder of ours");
  await symlink(outside, join(dir, "driftless-render-link01"));
  return [...names, "driftless-render-file01", "driftless-render-link01"];
}

void describe("removeOwnTempFolders", () => {
  void it("removes the render and git key folders a killed run made, and nothing else, nor what a symlink points at", async () => {
    const outside = await mkdtemp(join(root, "outside-"));
    await writeFile(join(outside, "keep"), "x");
    const ours = await leftByAKilledRun(temp);
    const theirs = await othersBeside(temp, outside);
    const removed = await removeOwnTempFolders(temp);
    assert.deepEqual([...removed].sort(), ours.map((p) => p.slice(temp.length + 1)).sort());
    assert.deepEqual((await readdir(temp)).sort(), [...theirs].sort());
    assert.ok((await stat(join(outside, "keep"))).isFile(), "a symlink's target was removed");
  });
});

void describe("sweepStaleTempFolders", () => {
  void it(`sweeps os.tmpdir() only when ${PrivateTmpdirEnv}=true says it is this process's alone`, async () => {
    process.env["TMPDIR"] = temp;
    const ours = await leftByAKilledRun(temp);
    for (const env of [{}, { [PrivateTmpdirEnv]: "" }, { [PrivateTmpdirEnv]: "1" }, { [PrivateTmpdirEnv]: "false" }]) {
      assert.deepEqual(await sweepStaleTempFolders(env, quiet), [], `swept with ${JSON.stringify(env)}`);
      assert.equal((await readdir(temp)).length, ours.length, `a shared /tmp was swept with ${JSON.stringify(env)}`);
    }
    assert.equal((await sweepStaleTempFolders({ [PrivateTmpdirEnv]: "true" }, quiet)).length, ours.length);
    assert.deepEqual(await readdir(temp), []);
  });

  void it("logs a temp folder it cannot read and lets the start go on", async () => {
    const lines: string[] = [];
    process.env["TMPDIR"] = join(temp, "absent");
    const log = createLogger({}, { write: (line) => void lines.push(line) });
    assert.deepEqual(await sweepStaleTempFolders({ [PrivateTmpdirEnv]: "true" }, log), []);
    assert.match(lines.join(""), /could not remove the temp folders/);
  });

  void it("reads the flag from the environment as given", () => {
    assert.equal(tmpdirIsPrivate({ [PrivateTmpdirEnv]: "true" }), true);
    assert.equal(tmpdirIsPrivate({}), false);
  });
});
