/**
 * Git over a real HTTP proxy (Debian's tinyproxy) in front of a real smart-HTTP server (git
 * http-backend): spec.git.proxy and the token Secret's proxy keys, as Config Sync honours them,
 * override.gitSyncDepth, and submodules.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import {
  selfSignedCert,
  startGitHttpServer,
  startHttpProxy,
  type GitHttpServer,
  type HttpProxy,
} from "@driftless/git/testing";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  TestRepo,
  type JsonObject,
  removeAfter,
} from "../../support/index.ts";

const run = promisify(execFile);
const json = (obj: unknown): string => JSON.stringify(obj);

async function served(
  t: TestContext,
  repo: TestRepo,
  auth?: { username: string; token: string },
): Promise<GitHttpServer> {
  const server = await startGitHttpServer({ projectRoot: dirname(repo.remote), ...auth });
  t.after(() => server.close());
  return server;
}

async function proxy(t: TestContext): Promise<HttpProxy> {
  const started = await startHttpProxy();
  t.after(() => started.close());
  return started;
}

async function testNamespace(t: TestContext, prefix: string): Promise<string> {
  const namespace = `${prefix}-${suffix()}`;
  await coreApi().createNamespace({ body: { metadata: { name: namespace } } });
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  return namespace;
}

function configMap(namespace: string, name: string, data: Record<string, string>): string {
  return json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });
}

async function readConfigMap(namespace: string, name: string): Promise<JsonObject | undefined> {
  try {
    return (await coreApi().readNamespacedConfigMap({ namespace, name })) as unknown as JsonObject;
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

test("spec.git.proxy: the fetch goes through the proxy, as its log shows, and an unreachable proxy is KNV2004 on status with nothing deleted", async (t) => {
  const namespace = await testNamespace(t, "gproxy");
  const repo = await TestRepo.create(t);
  await repo.write("config/cm.yaml", configMap(namespace, "through-proxy", { via: "tinyproxy" }));
  const commit = await repo.commit("one config map");
  const server = await served(t, repo);
  const tinyproxy = await proxy(t);
  const name = `gproxy-${suffix()}`;
  await createRootSync(name, repo, {
    spec: {
      git: { repo: server.url("remote.git"), branch: repo.branch, dir: "config", auth: "none", proxy: tinyproxy.url },
    },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);
  assert.ok(await readConfigMap(namespace, "through-proxy"));
  const upload = `GET http://127.0.0.1:${String(server.port)}/remote.git/info/refs?service=git-upload-pack`;
  assert.ok(
    tinyproxy.requests().some((line) => line.startsWith(upload)),
    `the proxy saw no fetch: ${JSON.stringify(tinyproxy.requests())}`,
  );

  // The proxy goes away: a retryable fetch error naming it, and what was synced stays.
  const port = tinyproxy.port;
  await tinyproxy.close();
  await repo.write("config/cm.yaml", configMap(namespace, "through-proxy", { via: "tinyproxy", v: "2" }));
  await repo.commit("a second commit, unreachable");
  const errors = await eventually(
    async () => {
      const source = ((await rootSyncStatus(name))["source"] ?? {}) as JsonObject;
      const found = (source["errors"] ?? []) as JsonObject[];
      return found.length > 0 ? found : undefined;
    },
    { timeoutMs: 60_000, what: "the unreachable proxy on status.source.errors" },
  );
  assert.equal(errors[0]?.["code"], "2004", JSON.stringify(errors));
  assert.match(String(errors[0]?.["errorMessage"]), new RegExp(`through proxy http://127\\.0\\.0\\.1:${String(port)}`));
  assert.deepEqual((await readConfigMap(namespace, "through-proxy"))?.["data"], { via: "tinyproxy" });
});

test("the token Secret's http_proxy key: an http:// repository is fetched through that proxy with the Secret's credentials", async (t) => {
  const namespace = await testNamespace(t, "sproxy");
  const repo = await TestRepo.create(t);
  await repo.write("config/cm.yaml", configMap(namespace, "secret-proxy", { via: "secret" }));
  const commit = await repo.commit("one config map");
  const server = await served(t, repo, { username: "deploy", token: "s3cret-token" });
  const tinyproxy = await proxy(t);
  const name = `sproxy-${suffix()}`;
  const secretName = `git-creds-${suffix()}`;
  // Before the Secret: it makes the RootSync's namespace.
  await createRootSync(name, repo, {
    spec: {
      git: {
        repo: server.url("remote.git"),
        branch: repo.branch,
        dir: "config",
        auth: "token",
        secretRef: { name: secretName },
      },
    },
  });
  await coreApi().createNamespacedSecret({
    namespace: rootSyncNamespace,
    body: {
      metadata: { name: secretName },
      stringData: { username: "deploy", token: "s3cret-token", http_proxy: tinyproxy.url },
    },
  });
  t.after(() =>
    coreApi()
      .deleteNamespacedSecret({ namespace: rootSyncNamespace, name: secretName })
      .catch(() => undefined),
  );
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);
  assert.ok(await readConfigMap(namespace, "secret-proxy"));
  assert.ok(
    tinyproxy.requests().some((line) => line.includes(`127.0.0.1:${String(server.port)}/remote.git/`)),
    `the proxy saw no fetch: ${JSON.stringify(tinyproxy.requests())}`,
  );
  assert.ok(
    server.requests.some((r) => r.authorized && r.status === 200),
    "the server saw no authorized request",
  );
});

test("auth cookiefile: the Secret's cookie_file jar authenticates the fetch, through the Secret's http_proxy; a Secret without the key is KNV1061", async (t) => {
  const namespace = await testNamespace(t, "cookie");
  const repo = await TestRepo.create(t);
  await repo.write("config/cm.yaml", configMap(namespace, "from-cookie", { via: "cookie" }));
  const commit = await repo.commit("one config map");
  // As in a .gitcookies file: cookie "o", whose value itself holds an "=".
  const cookieValue = `git-bot=${suffix()}`;
  const server = await startGitHttpServer({ projectRoot: dirname(repo.remote), cookie: `o=${cookieValue}` });
  t.after(() => server.close());
  const tinyproxy = await proxy(t);
  const name = `cookie-${suffix()}`;
  const secretName = `git-cookie-${suffix()}`;
  await createRootSync(name, repo, {
    spec: {
      git: {
        repo: server.url("remote.git"),
        branch: repo.branch,
        dir: "config",
        auth: "cookiefile",
        secretRef: { name: secretName },
      },
    },
  });
  // First without the key: Config Sync's words, and nothing fetched.
  await coreApi().createNamespacedSecret({
    namespace: rootSyncNamespace,
    body: { metadata: { name: secretName }, stringData: { token: "not-a-jar" } },
  });
  t.after(() =>
    coreApi()
      .deleteNamespacedSecret({ namespace: rootSyncNamespace, name: secretName })
      .catch(() => undefined),
  );
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  const errors = await eventually(
    async () => {
      const source = ((await rootSyncStatus(name))["source"] ?? {}) as JsonObject;
      const found = (source["errors"] ?? []) as JsonObject[];
      return found.length > 0 ? found : undefined;
    },
    { timeoutMs: 60_000, what: "the missing cookie_file key on status.source.errors" },
  );
  assert.equal(errors[0]?.["code"], "1061", JSON.stringify(errors));
  assert.match(String(errors[0]?.["errorMessage"]), /"cookie_file" key is not present in "git-cookie-/);

  const jar = `# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\to\t${cookieValue}\n`;
  await coreApi().replaceNamespacedSecret({
    namespace: rootSyncNamespace,
    name: secretName,
    body: { metadata: { name: secretName }, stringData: { cookie_file: jar, http_proxy: tinyproxy.url } },
  });
  await rootSynced(name, commit);
  assert.deepEqual((await readConfigMap(namespace, "from-cookie"))?.["data"], { via: "cookie" });
  assert.ok(
    server.requests.some((r) => r.authorized && r.status === 200),
    "the server saw no request with the cookie",
  );
  assert.ok(
    tinyproxy.requests().some((line) => line.includes(`127.0.0.1:${String(server.port)}/remote.git/`)),
    `the proxy saw no fetch: ${JSON.stringify(tinyproxy.requests())}`,
  );
});

test("the token Secret's https_proxy key: an https:// repository is reached through the proxy's CONNECT tunnel, its CA from caCertSecretRef", async (t) => {
  const namespace = await testNamespace(t, "tproxy");
  const repo = await TestRepo.create(t);
  await repo.write("config/cm.yaml", configMap(namespace, "tunnelled", { via: "connect" }));
  const commit = await repo.commit("one config map");
  const certDir = await mkdtemp(join(tmpdir(), "driftless-proxy-tls-"));
  removeAfter(t, certDir);
  const tls = await selfSignedCert(certDir);
  const server = await startGitHttpServer({
    projectRoot: dirname(repo.remote),
    username: "deploy",
    token: "tls-token",
    tls,
  });
  t.after(() => server.close());
  const tinyproxy = await proxy(t);
  const name = `tproxy-${suffix()}`;
  const secrets = { creds: `git-creds-${suffix()}`, ca: `git-ca-${suffix()}` };
  // Before the Secrets: it makes the RootSync's namespace.
  await createRootSync(name, repo, {
    spec: {
      git: {
        repo: server.url("remote.git"),
        branch: repo.branch,
        dir: "config",
        auth: "token",
        secretRef: { name: secrets.creds },
        caCertSecretRef: { name: secrets.ca },
      },
    },
  });
  for (const [secretName, stringData] of [
    [secrets.creds, { username: "deploy", token: "tls-token", https_proxy: tinyproxy.url }],
    [secrets.ca, { cert: tls.cert }],
  ] as const) {
    await coreApi().createNamespacedSecret({
      namespace: rootSyncNamespace,
      body: { metadata: { name: secretName }, stringData },
    });
    t.after(() =>
      coreApi()
        .deleteNamespacedSecret({ namespace: rootSyncNamespace, name: secretName })
        .catch(() => undefined),
    );
  }
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);
  assert.ok(await readConfigMap(namespace, "tunnelled"));
  assert.ok(
    tinyproxy.requests().some((line) => line.startsWith(`CONNECT 127.0.0.1:${String(server.port)}`)),
    `the proxy tunnelled nothing: ${JSON.stringify(tinyproxy.requests())}`,
  );
});

test("override.gitSyncDepth: the cache holds that many commits of history, and 0 fetches all of it", async (t) => {
  const namespace = await testNamespace(t, "depth");
  for (const [depth, expected] of [
    [2, 2],
    [0, 4],
  ] as const) {
    const repo = await TestRepo.create(t);
    for (const v of ["1", "2", "3", "4"]) {
      await repo.write("config/cm.yaml", configMap(namespace, `deep-${String(depth)}`, { v }));
      await repo.commit(`commit ${v}`);
    }
    const commit = await repo.git("rev-parse", "HEAD");
    const server = await served(t, repo);
    const name = `depth-${String(depth)}-${suffix()}`;
    await createRootSync(name, repo, {
      spec: {
        git: { repo: server.url("remote.git"), branch: repo.branch, dir: "config", auth: "none" },
        override: { gitSyncDepth: depth },
      },
    });
    t.after(() =>
      customApi()
        .deleteNamespacedCustomObject({ ...rootSyncs, name })
        .catch(() => undefined),
    );
    const cacheDir = await mkdtemp(join(tmpdir(), "driftless-depth-"));
    removeAfter(t, cacheDir);
    await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { cacheDir });
    await rootSynced(name, commit);
    const gitDir = await findCacheRepo(cacheDir);
    const { stdout } = await run("git", ["--git-dir", gitDir, "rev-list", "--count", "refs/driftless/target"]);
    assert.equal(Number(stdout.trim()), expected, `gitSyncDepth ${String(depth)}`);
  }
});

test("submodules are fetched and their files synced, as Config Sync does, from a smart-HTTP repository", async (t) => {
  const namespace = await testNamespace(t, "submod");
  const sub = await TestRepo.create(t);
  await sub.write("cm.yaml", configMap(namespace, "from-submodule", { from: "submodule" }));
  const subCommit = await sub.commit("a config map in the submodule");
  const subServer = await served(t, sub);
  const repo = await TestRepo.create(t);
  await repo.write("config/cm.yaml", configMap(namespace, "from-parent", { from: "parent" }));
  await repo.git(
    "-c",
    "protocol.file.allow=always",
    "submodule",
    "add",
    "-q",
    "-b",
    sub.branch,
    subServer.url("remote.git"),
    "config/shared",
  );
  const commit = await repo.commit("a parent with a submodule");
  const server = await served(t, repo);
  const name = `submod-${suffix()}`;
  await createRootSync(name, repo, {
    spec: { git: { repo: server.url("remote.git"), branch: repo.branch, dir: "config", auth: "none" } },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);
  assert.deepEqual((await readConfigMap(namespace, "from-parent"))?.["data"], { from: "parent" });
  assert.deepEqual((await readConfigMap(namespace, "from-submodule"))?.["data"], { from: "submodule" });
  assert.ok(
    subServer.requests.some((r) => r.status === 200),
    `the submodule's server was not asked for ${subCommit.slice(0, 7)}`,
  );
});

/** `<cacheDir>/<syncKey>/repo.git`, the fetcher's cache repository. */
async function findCacheRepo(cacheDir: string): Promise<string> {
  for (const entry of await readdir(cacheDir, { recursive: true })) {
    if (entry.endsWith("repo.git")) return join(cacheDir, entry);
  }
  throw new Error(`no repo.git under ${cacheDir}`);
}
