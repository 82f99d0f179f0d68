import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { basename, dirname } from "node:path";
import { reconcilerName } from "@driftless/api";
import { startGitHttpServer } from "@driftless/git/testing";
import type { KubeObject, ResourceMapping } from "@driftless/kube";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import {
  admin,
  configMap,
  createSync,
  getSync,
  reconcilerLog,
  rootSyncObject,
  startManager,
  systemNamespace,
} from "./helpers.ts";

const eventMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Event",
  resource: "events",
  namespaced: true,
  verbs: [],
};

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(address !== null && typeof address === "object");
  return address.port;
}

function sourceErrors(sync: KubeObject | undefined): string[] {
  const status = (sync?.["status"] ?? {}) as { source?: { errors?: { errorMessage?: string }[] } };
  return (status.source?.errors ?? []).map((e) => e.errorMessage ?? "");
}

async function eventMessages(name: string): Promise<string[]> {
  const events = await (
    await admin()
  ).list(eventMapping, {
    namespace: systemNamespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return events.items.map((e) => String(e["message"] ?? ""));
}

test("credentials written into spec.git.repo reach no status, Event or log, and the errors still say what failed", async (t) => {
  const manager = await startManager(t);
  const token = `s3cr3t-token-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", "default", { v: "1" }));
  await repo.commit("v1");
  // A real git server that refuses these credentials (it wants others).
  const server = await startGitHttpServer({ projectRoot: dirname(repo.remote), username: "deploy", token: "other" });
  t.after(() => server.close());
  const withToken = (url: string): string => url.replace("://", `://deploy:${token}@`);
  const cases = [
    {
      name: `creds-${manager.scope.id}-closed`,
      repo: withToken(`http://127.0.0.1:${await closedPort()}/x.git`),
      says: /of http:\/\/\*\*\*@127\.0\.0\.1:\d+\/x\.git: the remote could not be reached/,
    },
    {
      name: `creds-${manager.scope.id}-badport`,
      repo: withToken("https://127.0.0.1:99999/x.git"),
      says: /spec\.git\.repo "https:\/\/\*\*\*@127\.0\.0\.1:99999\/x\.git" is not a valid URL/,
    },
    {
      name: `creds-${manager.scope.id}-refused`,
      repo: withToken(server.url(basename(repo.remote))),
      says: /the credentials were rejected/,
    },
  ];
  for (const c of cases) {
    await createSync(t, rootSyncObject(c.name, manager.scope, { repo: c.repo, branch: repo.branch }));
  }

  for (const c of cases) {
    const reconciler = reconcilerName("RootSync", systemNamespace, c.name);
    const errors = await eventually(
      async () => {
        const found = sourceErrors(await getSync("RootSync", systemNamespace, c.name));
        return found.length > 0 ? found : undefined;
      },
      { what: `source errors on ${c.name}`, timeoutMs: 60_000 },
    ).catch(async (error: unknown) => {
      t.diagnostic(`${reconciler} log:\n${await reconcilerLog(manager.scope, reconciler)}`);
      throw error;
    });
    assert.match(errors.join("\n"), c.says);
    const events = await eventually(
      async () => {
        const found = await eventMessages(c.name);
        return found.length > 0 ? found : undefined;
      },
      { what: `an Event on ${c.name}` },
    );
    const sync = await getSync("RootSync", systemNamespace, c.name);
    // The pass's log line comes after its status and Event: wait for it, so the log is checked whole.
    const reconcilerLines = await eventually(
      async () => {
        const lines = await reconcilerLog(manager.scope, reconciler);
        return lines.includes("pass finished") ? lines : undefined;
      },
      { what: `a pass logged by ${c.name}'s reconciler` },
    );
    t.diagnostic(`${c.name}: ${errors[0] ?? ""}`);
    assert.ok(!JSON.stringify(sync?.["status"]).includes(token), `status of ${c.name} holds the token`);
    assert.ok(!events.join("\n").includes(token), `an Event on ${c.name} holds the token`);
    assert.ok(!reconcilerLines.includes(token), `the reconciler log of ${c.name} holds the token`);
  }
  assert.ok(!manager.logs.join("\n").includes(token), "the manager's log holds the token");
  assert.ok(
    server.requests.some((r) => r.status === 401),
    "the git server was never asked, so the refusal was not tested",
  );
});
