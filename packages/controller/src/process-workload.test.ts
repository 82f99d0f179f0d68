import assert from "node:assert/strict";
import { chmod, chown, lstat, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { PrivateTmpdirEnv } from "@driftless/sync";
import { UnsafeStateDirError } from "./private-dir.ts";
import { childEnvironment, ProcessWorkload, type ProcessWorkloadOptions } from "./process-workload.ts";

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), "driftless-process-workload-"));
});
after(() => rm(root, { recursive: true, force: true }));

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Only the state folder matters here: nothing reaches the API server or Redis before a sync is ensured. */
function options(stateDir: string): ProcessWorkloadOptions {
  return {
    client: {} as never,
    access: { server: "https://127.0.0.1:1", caData: undefined, insecureSkipTlsVerify: false },
    stateDir,
    reconcilerEntry: "",
    redisUrl: "redis://127.0.0.1:1",
    redisUsers: {} as never,
    queuePrefix: undefined,
    allowFileRepos: false,
    logLevel: "info",
    log: quiet as never,
  };
}

void describe("ProcessWorkload's state folder", () => {
  void it(
    "refuses to start on one another local user made first (in a shared /tmp), where it would write tokens they can read",
    { skip: process.getuid?.() !== 0 },
    async () => {
      const stateDir = join(root, "squatted");
      await mkdir(stateDir);
      await chown(stateDir, 65534, 65534); // nobody: another local user
      await chmod(stateDir, 0o777);
      assert.throws(() => new ProcessWorkload(options(stateDir)), UnsafeStateDirError);
    },
  );

  void it("creates a missing one, for the manager's user only", async () => {
    const stateDir = join(root, "fresh", "state");
    const workload = new ProcessWorkload(options(stateDir));
    await workload.close();
    assert.equal((await lstat(stateDir)).mode & 0o777, 0o700);
  });
});

describe("childEnvironment", () => {
  it("blanks the manager's METRICS_PORT, which a reconciler child would otherwise inherit and bind too", () => {
    const inherited = { METRICS_PORT: "8080", LOG_LEVEL: "info" };
    const env: Record<string, string> = {
      ...inherited,
      ...childEnvironment("redis://127.0.0.1:6379", "user-a", "secret", "/state/a/tmp"),
    };
    assert.equal(env.METRICS_PORT, "", "a child's metrics port is its own flag's, never the manager's");
    assert.equal(env.REDIS_USERNAME, "user-a");
    assert.equal(env.REDIS_PASSWORD, "secret");
  });

  it("gives each child a temp folder of its own, marked private, instead of the manager's shared one", () => {
    const inherited = { TMPDIR: "/tmp", [PrivateTmpdirEnv]: "false" };
    const env: Record<string, string> = {
      ...inherited,
      ...childEnvironment("redis://127.0.0.1:6379", "user-a", "secret", "/state/a/tmp"),
    };
    assert.equal(env.TMPDIR, "/state/a/tmp");
    assert.equal(env[PrivateTmpdirEnv], "true", "a child would not sweep what a killed predecessor left");
  });
});
