import { test } from "node:test";
import assert from "node:assert/strict";
import { DriftlessError, ErrorClass, KnvCode, parseSync, type RSync } from "@driftless/api";
import type { KubeClient, KubeObject } from "@driftless/kube";
import { recordEvent, SyncEventReason } from "./events.ts";
import { createLogger } from "./log.ts";
import { nextStatus, writeStatus } from "./status.ts";

const token = "s3cr3t-token";
const repo = `https://user:${token}@git.example.com/org/repo.git`;
const identity = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
const raw: KubeObject = {
  apiVersion: "configsync.gke.io/v1beta1",
  kind: "RootSync",
  metadata: { name: identity.name, namespace: identity.namespace, generation: 1 },
  spec: { sourceFormat: "unstructured", git: { repo, auth: "none" } },
};
const quiet = createLogger({}, { write: () => undefined });

/** A client that keeps what is written: only the calls these boundaries make. */
function recordingClient(): { client: KubeClient; written: KubeObject[] } {
  const written: KubeObject[] = [];
  const client = {
    get: () => Promise.resolve(raw),
    replaceStatus: (_m: unknown, obj: KubeObject) => (written.push(obj), Promise.resolve(obj)),
    create: (_m: unknown, obj: KubeObject) => (written.push(obj), Promise.resolve(obj)),
  } as unknown as KubeClient;
  return { client, written };
}

test("a log line never holds URL credentials, in any field or message", () => {
  const lines: string[] = [];
  const log = createLogger({ repo }, { write: (line) => lines.push(line) });
  log.warn(`could not fetch ${repo}`, { error: new Error(`git: ${repo}`).message });
  assert.equal(lines.length, 1);
  assert.ok(!lines[0]?.includes(token), lines[0]);
  assert.equal((JSON.parse(lines[0] ?? "{}") as { repo: string }).repo, "https://***@git.example.com/org/repo.git");
});

test("status echoes spec.git.repo without its credentials, and no status write carries them", async () => {
  const parsed = parseSync(raw);
  assert.ok(parsed.ok);
  const sync: RSync = parsed.value;
  const error = new DriftlessError({
    code: KnvCode.SourceFetch,
    errorClass: ErrorClass.Retry,
    message: `failed to fetch ${repo}`,
  });
  const report = { commit: undefined, sourceErrors: [error], syncErrors: [], synced: false };
  const status = nextStatus(identity, sync, {}, report, new Date());
  assert.equal(
    (status["source"] as { gitStatus: { repo: string } }).gitStatus.repo,
    "https://***@git.example.com/org/repo.git",
  );

  const { client, written } = recordingClient();
  await writeStatus(client, identity, (_raw, current) => nextStatus(identity, sync, current, report, new Date()));
  assert.equal(written.length, 1);
  assert.ok(!JSON.stringify(written[0]?.["status"]).includes(token), JSON.stringify(written[0]?.["status"]));
});

test("an Event message never holds URL credentials", async () => {
  const { client, written } = recordingClient();
  await recordEvent(client, identity, raw, SyncEventReason.Failed, `KNV2004: failed to fetch ${repo}`, quiet);
  assert.equal(written.length, 1);
  assert.equal(written[0]?.["message"], "KNV2004: failed to fetch https://***@git.example.com/org/repo.git");
});
