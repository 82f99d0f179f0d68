import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { ManagedAnnotation, reconcilerName } from "@driftless/api";
import { startGitHttpServer } from "@driftless/git/testing";
import type { KubeObject, ResourceMapping } from "@driftless/kube";
import { findRepoRoot } from "@driftless/local-cluster";
import { eventually, suffix, testEnv, TestRepo } from "../../support/index.ts";
import {
  admin,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  reconcilerLog,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
  type RunningManager,
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

const secretMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Secret",
  resource: "secrets",
  namespaced: true,
  verbs: [],
};

/** `driftless status --name <name>` as a user runs it, in text and JSON; exit 1 (not synced) is an answer too. */
async function cliStatus(name: string): Promise<string> {
  const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");
  const outputs = await Promise.all(
    ["text", "json"].map((format) =>
      promisify(execFile)(process.execPath, [
        cli,
        "status",
        "--name",
        name,
        "-o",
        format,
        "--kubeconfig",
        testEnv().kubeconfig,
      ]).then(
        (r) => r.stdout,
        (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}`,
      ),
    ),
  );
  return outputs.join("\n");
}

/**
 * Where a sync's credentials could leak, once its reconciler has recorded a pass: status, Events, the reconciler's
 * log and `driftless status`, each checked for `secret`.
 */
async function assertNowhere(manager: RunningManager, name: string, secret: string): Promise<void> {
  const reconciler = reconcilerName("RootSync", systemNamespace, name);
  const events = await eventually(
    async () => {
      const found = await eventMessages(name);
      return found.length > 0 ? found : undefined;
    },
    { what: `an Event on ${name}` },
  );
  const lines = await eventually(
    async () => {
      const log = await reconcilerLog(manager.scope, reconciler);
      return log.includes("pass finished") ? log : undefined;
    },
    { what: `a pass logged by ${name}'s reconciler` },
  );
  const status = JSON.stringify((await getSync("RootSync", systemNamespace, name))?.["status"]);
  const cli = await cliStatus(name);
  assert.ok(cli.includes(name), `driftless status shows ${name}: ${cli}`);
  assert.ok(!status.includes(secret), `status of ${name} holds the password: ${status}`);
  assert.ok(!events.join("\n").includes(secret), `an Event on ${name} holds the password: ${events.join("\n")}`);
  assert.ok(!lines.includes(secret), `the reconciler log of ${name} holds the password`);
  assert.ok(!cli.includes(secret), `driftless status of ${name} shows the password: ${cli}`);
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

test("a password holding '#', '?' or '/' in spec.git.repo or a Secret's proxy URL reaches no status, Event, log or driftless status", async (t) => {
  const manager = await startManager(t);
  // A value found nowhere else, inside the part of the password a URL parser cuts off.
  const secret = `s3cr3t${suffix()}${suffix()}`;
  const port = await closedPort();
  const secretName = `proxy-creds-${manager.scope.id}`;
  const client = await admin();
  await client.create(secretMapping, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: secretName, namespace: systemNamespace },
    stringData: {
      username: "deploy",
      token: "t0ken",
      https_proxy: `http://proxyuser:Pr0xy#${secret}@proxy.corp:3128`,
    },
  });
  t.after(() => client.delete(secretMapping, systemNamespace, secretName).catch(() => undefined));
  const inRepo = `creds-${manager.scope.id}-repo`;
  const inProxy = `creds-${manager.scope.id}-proxy`;
  await createSync(
    t,
    rootSyncObject(inRepo, manager.scope, {
      repo: `http://deploy:pa#ss/${secret}/w?rd@127.0.0.1:${port}/x.git`,
      branch: "main",
    }),
  );
  const proxied = rootSyncObject(inProxy, manager.scope, { repo: `https://127.0.0.1:${port}/x.git`, branch: "main" });
  const spec = proxied["spec"] as { git: Record<string, unknown> };
  spec.git = { ...spec.git, auth: "token", secretRef: { name: secretName } };
  await createSync(t, proxied);

  for (const [name, says] of [
    [inRepo, /spec\.git\.repo "http:\/\/\*\*\*@127\.0\.0\.1:\d+\/x\.git" is not a valid URL/],
    [inProxy, /https_proxy key "http:\/\/\*\*\*@proxy\.corp:3128" is not a proxy URL/],
  ] as const) {
    const errors = await eventually(
      async () => {
        const found = sourceErrors(await getSync("RootSync", systemNamespace, name));
        return found.length > 0 ? found : undefined;
      },
      { what: `source errors on ${name}`, timeoutMs: 60_000 },
    );
    assert.match(errors.join("\n"), says);
    await assertNowhere(manager, name, secret);
  }
  assert.ok(!manager.logs.join("\n").includes(secret), "the manager's log holds the password");
});

test("a token written as user:token@host/path, https:// left out, reaches no status, Event, log or driftless status", async (t) => {
  const manager = await startManager(t);
  const secret = `glpat${suffix()}${suffix()}`;
  const name = `creds-${manager.scope.id}-noscheme`;
  // git reads it as scp-like ssh to host "oauth2" (path "<token>@..."): the token is in every message naming it.
  await createSync(
    t,
    rootSyncObject(name, manager.scope, { repo: `oauth2:${secret}@127.0.0.1/org/x.git`, branch: "main" }),
  );
  const errors = await eventually(
    async () => {
      const found = sourceErrors(await getSync("RootSync", systemNamespace, name));
      return found.length > 0 ? found : undefined;
    },
    { what: `source errors on ${name}`, timeoutMs: 60_000 },
  );
  t.diagnostic(errors.join("\n"));
  await assertNowhere(manager, name, secret);
  assert.ok(!manager.logs.join("\n").includes(secret), "the manager's log holds the token");
});

test("a password holding <, >, and a quote fetches from a real git server and stays out of the git-context annotation of what it syncs", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "creds");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("settings", target, { v: "1" }));
  const commit = await repo.commit("v1");
  const unique = `${suffix()}${suffix()}`;
  const password = `Pa<ss>w"d-${unique}`;
  const server = await startGitHttpServer({ projectRoot: dirname(repo.remote), username: "deploy", token: password });
  t.after(() => server.close());
  const name = `creds-${manager.scope.id}-quoted`;
  const url = server.url(basename(repo.remote)).replace("://", `://deploy:${password}@`);
  await createSync(t, rootSyncObject(name, manager.scope, { repo: url, branch: repo.branch }));

  await synced("RootSync", systemNamespace, name, commit, 90_000);
  const settings = await getObject(Mapping.ConfigMap, target, "settings");
  const context = settings?.metadata.annotations?.[ManagedAnnotation.GitContext] ?? "";
  assert.ok(!context.includes(unique), `the git-context annotation holds the password: ${context}`);
  assert.deepEqual(JSON.parse(context), {
    repo: server.url(basename(repo.remote)).replace("://", "://***@"),
    branch: repo.branch,
    rev: "HEAD",
  });
  await assertNowhere(manager, name, unique);
  assert.ok(!manager.logs.join("\n").includes(unique), "the manager's log holds the password");
});
