/**
 * A tenant who controls a repository gets nothing beyond its sync's rights from rendering: the real
 * kustomize (with LoadRestrictionsNone, as Config Sync) never reads a file outside the checkout nor
 * fetches a URL without shell access, and a server that never answers does not hold a render.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorClass } from "@driftless/api";
import { HelmSource, HelmSourceError } from "@driftless/sync";
import { renderKustomization, RenderingError } from "@driftless/sync/render";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const renderToolsDir = execFileSync("bash", ["packages/sync/scripts/build-render-tools.sh"], { encoding: "utf8" })
  .trim()
  .split("\n")
  .at(-1)!;

const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);

async function scratch(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-confine-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A loopback HTTP server that answers every GET with `body` and counts the requests. */
async function httpServer(t: TestContext, body: string): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? "");
    response.writeHead(200, { "content-type": "text/plain" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { url: `http://127.0.0.1:${address.port}`, requests };
}

/** A loopback TCP listener that accepts connections and never answers. */
async function hungServer(t: TestContext): Promise<{ url: string; connections: () => number }> {
  const sockets: Socket[] = [];
  const server = createTcpServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { url: `http://127.0.0.1:${address.port}`, connections: () => sockets.length };
}

async function configMaps(namespace: string): Promise<Map<string, JsonObject>> {
  const list = await coreApi().listNamespacedConfigMap({ namespace });
  return new Map(list.items.map((cm) => [cm.metadata!.name!, cm as JsonObject]));
}

async function renderingAt(name: string, commit: string): Promise<JsonObject> {
  return eventually(
    async () => {
      const rendering = (await rootSyncStatus(name))["rendering"] as JsonObject | undefined;
      return rendering?.["commit"] === commit ? rendering : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report rendering of ${commit.slice(0, 7)}` },
  );
}

test("a kustomization naming a file outside its checkout (absolute, ../, a symlink, chartHome) or a URL fails rendering with KNV1068 naming it; the file never reaches the cluster, nothing is pruned, and a file elsewhere in the repository still renders", async (t) => {
  const name = `confine-${suffix()}`;
  const ns = `confine-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .then(
        () => undefined,
        () => undefined,
      ),
  );
  const secretText = `reconciler-token-${suffix()}`;
  const outside = await scratch(t);
  const token = join(outside, "token");
  await writeFile(token, secretText);
  // A chart outside the checkout, as another sync's cache or a tenant-planted folder would hold one.
  await mkdir(join(outside, "charts", "stray", "templates"), { recursive: true });
  await writeFile(join(outside, "charts", "stray", "Chart.yaml"), "apiVersion: v2\nname: stray\nversion: 0.1.0\n");
  await writeFile(join(outside, "charts", "stray", "values.yaml"), "{}\n");
  await writeFile(
    join(outside, "charts", "stray", "templates", "cm.yaml"),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stray\ndata:\n  secret: ${secretText}\n`,
  );
  const server = await httpServer(
    t,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\ndata:\n  secret: ${secretText}\n`,
  );

  const repo = await TestRepo.create(t);
  const keep = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keep" }, data: { a: "1" } };
  await repo.write("config/keep.yaml", yaml(keep));
  await repo.write("config/kustomization.yaml", yaml({ namespace: ns, resources: ["keep.yaml"] }));
  await repo.write("shared/settings.txt", "from elsewhere in the repository\n");
  const good = await repo.commit("good");
  await coreApi().createNamespace({ body: { metadata: { name: ns } } });
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { renderToolsDir });
  await rootSynced(name, good);

  const generator = (files: string[]): JsonObject => ({
    namespace: ns,
    resources: ["keep.yaml"],
    configMapGenerator: [{ name: "leak", files }],
  });
  const cases: [string, JsonObject, RegExp][] = [
    ["an absolute path", generator([`leak=${token}`]), /files entry ".*token" is an absolute path/],
    // The checkout is somewhere under the reconciler's cache: enough ../ reach / from anywhere.
    ["a ../ path", generator([`leak=${"../".repeat(40)}${token.slice(1)}`]), /leaves the repository/],
    ["a symlink", generator(["leak=token"]), /"token" is a symlink to .*token, outside the repository/],
    [
      "chartHome outside",
      {
        namespace: ns,
        resources: ["keep.yaml"],
        helmGlobals: { chartHome: join(outside, "charts") },
        helmCharts: [{ name: "stray", releaseName: "stray" }],
      },
      /chartHome ".*charts" is an absolute path/,
    ],
    ["a URL resource", { namespace: ns, resources: ["keep.yaml", `${server.url}/cm.yaml`] }, /is a URL/],
    [
      "a URL valuesFile",
      {
        namespace: ns,
        resources: ["keep.yaml"],
        helmCharts: [{ name: "tiny", releaseName: "tiny", valuesFile: `${server.url}/values.yaml` }],
      },
      /valuesFile ".*values\.yaml" is a URL/,
    ],
  ];
  await repo.write("config/charts/tiny/Chart.yaml", "apiVersion: v2\nname: tiny\nversion: 0.1.0\n");
  await repo.write(
    "config/charts/tiny/templates/cm.yaml",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tiny\ndata:\n  secret: {{ .Values.secret | quote }}\n",
  );
  await symlink(token, join(repo.work, "config", "token"));
  for (const [label, kustomization, why] of cases) {
    await repo.write("config/kustomization.yaml", yaml(kustomization));
    const commit = await repo.commit(label);
    const rendering = await renderingAt(name, commit);
    assert.equal(rendering["message"], "Rendering failed", `${label}: ${JSON.stringify(rendering)}`);
    const [error] = rendering["errors"] as JsonObject[];
    assert.equal(error?.["code"], "1068", label);
    assert.match(String(error?.["errorMessage"]), why, label);
    assert.match(String(error?.["errorMessage"]), /config\/kustomization\.yaml/, `${label}: names the kustomization`);
    const cms = await configMaps(ns);
    assert.ok(cms.has("keep"), `${label}: nothing pruned`);
    for (const cm of cms.values())
      assert.ok(!JSON.stringify(cm["data"] ?? {}).includes(secretText), `${label}: the secret reached the cluster`);
    assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], good, label);
  }
  assert.deepEqual(server.requests, [], "no URL was fetched");

  // Files elsewhere in the same repository are still allowed (why kustomize runs with LoadRestrictionsNone).
  await repo.remove("config/token");
  await repo.write("config/kustomization.yaml", yaml(generator(["settings=../shared/settings.txt"])));
  const fixed = await repo.commit("a file elsewhere in the repository");
  await rootSynced(name, fixed);
  const leak = [...(await configMaps(ns)).entries()].find(([n]) => n.startsWith("leak-"));
  assert.deepEqual(leak?.[1]["data"], { settings: "from elsewhere in the repository\n" });
});

test("kustomize is stopped at its deadline when a URL resource (shell enabled) or a chart repository never answers", async (t) => {
  const hung = await hungServer(t);
  const repo = await scratch(t);
  const cases: [string, JsonObject][] = [
    ["a URL resource", { resources: [`${hung.url}/cm.yaml`] }],
    [
      "a helmCharts repository",
      { helmCharts: [{ name: "web", repo: hung.url, version: "1.0.0", releaseName: "web" }] },
    ],
  ];
  for (const [i, [label, kustomization]] of cases.entries()) {
    const dir = join(repo, String(i));
    await mkdir(dir);
    await writeFile(join(dir, "kustomization.yaml"), yaml(kustomization));
    const before = hung.connections();
    const started = Date.now();
    await assert.rejects(
      renderKustomization(dir, {
        tools: { dir: renderToolsDir },
        repositoryRoot: repo,
        enableShell: true,
        signal: AbortSignal.timeout(120_000),
        timeoutMs: 3000,
      }),
      (error: unknown) => {
        assert.ok(error instanceof RenderingError, `${label}: ${String(error)}`);
        assert.equal(error.errorClass, ErrorClass.Retry, label);
        assert.match(error.message, /did not finish within 3s/, label);
        return true;
      },
    );
    const took = Date.now() - started;
    assert.ok(took >= 3000 && took < 15_000, `${label}: ended after ${took} ms`);
    assert.ok(hung.connections() > before, `${label}: the request reached the server`);
  }
});

test("helm is stopped at its deadline when a spec.helm repository never answers", async (t) => {
  const hung = await hungServer(t);
  const source = new HelmSource(await scratch(t), renderToolsDir, 3000);
  const started = Date.now();
  await assert.rejects(
    source.fetch({
      spec: { repo: hung.url, chart: "web", version: "^1.0.0", auth: "none", period: "1h" },
      releaseNamespace: "default",
      credentials: {},
      valuesFiles: [],
      signal: AbortSignal.timeout(120_000),
    }),
    (error: unknown) => {
      assert.ok(error instanceof HelmSourceError, String(error));
      assert.equal(error.errorClass, ErrorClass.Retry);
      assert.match(error.message, /helm repo update .* did not finish within 3s/);
      return true;
    },
  );
  const took = Date.now() - started;
  assert.ok(took >= 3000 && took < 15_000, `ended after ${took} ms`);
  assert.ok(hung.connections() > 0, "the request reached the server");
});
