/**
 * A tenant who controls a repository gets nothing beyond its sync's rights from rendering: the real
 * kustomize (with LoadRestrictionsNone, as Config Sync) never reads a file outside the checkout nor
 * fetches a URL without shell access, and a server that never answers does not hold a render.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ErrorClass, KnvCode } from "@driftless/api";
import type { FetchResult } from "@driftless/git";
import { HelmSource, HelmSourceError } from "@driftless/sync";
import { removeRendered, renderKustomization, RenderingError } from "@driftless/sync/render";
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
  removeAfter,
} from "../../support/index.ts";
import { packageChart, startHelmRepo, type ChartFiles } from "../../support/helm-repo.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();

const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);

async function scratch(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-confine-"));
  removeAfter(t, dir);
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

/** A loopback HTTP server answering each path of `files` with its content (a chart repository), 404 otherwise. */
async function staticServer(
  t: TestContext,
  files: (url: string) => Record<string, string | Buffer>,
): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  let served: Record<string, string | Buffer> = {};
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? "");
    const body = served[request.url ?? ""];
    if (body === undefined) response.writeHead(404).end();
    else response.writeHead(200).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  const url = `http://127.0.0.1:${address.port}`;
  served = files(url);
  return { url, requests };
}

/** A chart repository index.yaml naming one chart version at `chartUrl`. */
function chartIndex(name: string, version: string, chartUrl: string): string {
  return yaml({
    apiVersion: "v1",
    entries: { [name]: [{ apiVersion: "v2", name, version, urls: [chartUrl] }] },
    generated: "2026-01-01T00:00:00Z",
  });
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

/** A secret in a file outside any checkout (`token` in the `outside` folder), as another sync's token would be. */
async function outsideToken(t: TestContext): Promise<{ secretText: string; outside: string; token: string }> {
  const secretText = `reconciler-token-${suffix()}`;
  const outside = await scratch(t);
  const token = join(outside, "token");
  await writeFile(token, secretText);
  return { secretText, outside, token };
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
  const { secretText, outside, token } = await outsideToken(t);
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
    // kustomize takes `/builtin` for `builtin` (group "", version "builtin"), and unwraps a List's items.
    [
      "a /builtin generator",
      {
        namespace: ns,
        resources: ["keep.yaml"],
        generators: [
          `apiVersion: /builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: leak\nfiles:\n  - leak=${token}\n`,
        ],
      },
      /generators entry \(inline\) \(ConfigMapGenerator\)\[\]\.files entry ".*token" is an absolute path/,
    ],
    [
      "a builtin generator inside a List",
      {
        namespace: ns,
        resources: ["keep.yaml"],
        generators: [
          yaml({
            apiVersion: "v1",
            kind: "List",
            items: [
              {
                apiVersion: "builtin",
                kind: "ConfigMapGenerator",
                metadata: { name: "leak" },
                files: [`leak=${token}`],
              },
            ],
          }),
        ],
      },
      /\(ConfigMapGenerator\)\[\]\.files entry ".*token" is an absolute path/,
    ],
    // helm's loader follows a symlinked directory of a chart, and every symlink below it.
    [
      "a chart directory symlinked to one holding a symlink out",
      { namespace: ns, resources: ["keep.yaml"], helmCharts: [{ name: "peek", releaseName: "peek", namespace: ns }] },
      /chart "peek": elsewhere\/secret is a symlink to .*token, outside the repository/,
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
  await repo.write("config/charts/peek/Chart.yaml", "apiVersion: v2\nname: peek\nversion: 0.1.0\n");
  await repo.write("config/charts/peek/values.yaml", "{}\n");
  await repo.write(
    "config/charts/peek/templates/cm.yaml",
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: peek\n  namespace: {{ .Release.Namespace }}\ndata:\n  secret: {{ .Files.Get "files/secret" | quote }}\n',
  );
  await mkdir(join(repo.work, "elsewhere"));
  await symlink(join("..", "..", "..", "elsewhere"), join(repo.work, "config", "charts", "peek", "files"));
  await symlink(token, join(repo.work, "elsewhere", "secret"));
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

  // Files elsewhere in the same repository are still allowed (why kustomize runs with LoadRestrictionsNone),
  // and so is a chart's symlinked directory whose files stay in the repository.
  await repo.remove("config/token");
  await repo.remove("elsewhere/secret");
  await repo.write("elsewhere/secret", "shared with the chart through a symlink\n");
  await repo.write(
    "config/kustomization.yaml",
    yaml({
      ...generator(["settings=../shared/settings.txt"]),
      helmCharts: [{ name: "peek", releaseName: "peek", namespace: ns }],
    }),
  );
  const fixed = await repo.commit("a file elsewhere in the repository");
  await rootSynced(name, fixed);
  const cms = await configMaps(ns);
  const leak = [...cms.entries()].find(([n]) => n.startsWith("leak-"));
  assert.deepEqual(leak?.[1]["data"], { settings: "from elsewhere in the repository\n" });
  assert.deepEqual(cms.get("peek")?.["data"], { secret: "shared with the chart through a symlink\n" });
});

test("a kustomization kustomize's go-yaml reads otherwise than the walk (a !!binary path or URL, a merge key, a UTF-16 file, a name the JS parse takes for a number) fails rendering with KNV1068 naming the construct; the outside file never reaches the cluster", async (t) => {
  const name = `confine-yaml-${suffix()}`;
  const ns = `confine-yaml-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .then(
        () => undefined,
        () => undefined,
      ),
  );
  const { secretText, token } = await outsideToken(t);
  const server = await httpServer(t, secretText);

  const repo = await TestRepo.create(t);
  await repo.write("config/keep.yaml", yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keep" } }));
  await repo.write("config/ok.txt", "inside the repository\n");
  await repo.write("config/kustomization.yaml", yaml({ namespace: ns, resources: ["keep.yaml"] }));
  await symlink(token, join(repo.work, "config", "._"));
  const good = await repo.commit("good");
  await coreApi().createNamespace({ body: { metadata: { name: ns } } });
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { renderToolsDir });
  await rootSynced(name, good);

  const head = `namespace: ${ns}\nresources: [keep.yaml]\nconfigMapGenerator:\n- name: leak\n`;
  const b64 = (text: string): string => Buffer.from(text).toString("base64");
  const cases: [string, string | Buffer, RegExp][] = [
    // go-yaml decodes !!binary into the string kustomize reads; the JS parse gave the walk a Buffer.
    ["a !!binary path", `${head}  files: [!!binary ${b64(`leak=${token}`)}]\n`, /line 5 uses the YAML tag !!binary/],
    [
      "a !!binary URL",
      `${head}  files: [!!binary ${b64(`leak=${server.url}/token`)}]\n`,
      /line 5 uses the YAML tag !!binary/,
    ],
    // go-yaml lets the merge overwrite `files`; the JS parse kept the explicit key.
    [
      "a merge key",
      `${head}  files: [leak=ok.txt]\n  <<: {files: ["leak=${token}"]}\n`,
      /line 6 uses the YAML merge key <</,
    ],
    // go-yaml reads a UTF-16 file (by its byte order mark); the JS parse saw one string and checked nothing.
    [
      "a UTF-16 kustomization",
      Buffer.from(`\ufeff${head}  files: ["leak=${token}"]\n`, "utf16le"),
      /config\/kustomization\.yaml is not UTF-8 \(UTF-16\)/,
    ],
    // YAML 1.1 takes `._` for a float (NaN) to the JS parse, which dropped it; go-yaml hands kustomize the name.
    ["a name the JS parse takes for a number", `${head}  files: [._]\n`, /"\._" is a symlink to .*token, outside/],
  ];
  for (const [label, kustomization, why] of cases) {
    await writeFile(join(repo.work, "config", "kustomization.yaml"), kustomization);
    const commit = await repo.commit(label);
    const rendering = await renderingAt(name, commit);
    assert.equal(rendering["message"], "Rendering failed", `${label}: ${JSON.stringify(rendering)}`);
    const [error] = rendering["errors"] as JsonObject[];
    assert.equal(error?.["code"], "1068", label);
    assert.match(String(error?.["errorMessage"]), why, label);
    assert.match(String(error?.["errorMessage"]), /config\/kustomization\.yaml/, `${label}: names the kustomization`);
    assert.ok(!String(error?.["errorMessage"]).includes(secretText), `${label}: the secret is in the error`);
    const cms = await configMaps(ns);
    assert.ok(cms.has("keep"), `${label}: nothing pruned`);
    for (const [cmName, cm] of cms)
      assert.ok(!JSON.stringify(cm["data"] ?? {}).includes(secretText), `${label}: ${cmName} carries the secret`);
    assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], good, label);
  }
  assert.deepEqual(server.requests, [], "no URL was fetched");

  // The same generator written plainly still renders.
  await repo.write("config/kustomization.yaml", `${head}  files: [leak=ok.txt]\n`);
  const fixed = await repo.commit("plain YAML");
  await rootSynced(name, fixed);
  const leak = [...(await configMaps(ns)).entries()].find(([n]) => n.startsWith("leak-"));
  assert.deepEqual(leak?.[1]["data"], { leak: "inside the repository\n" });
});

test("a line break only go-yaml sees (CR, NEL, LS, PS), a double-quoted \\N kustomize's plugins read as a space, or a plugin configuration's plain scalar kustomize reads as a number or a time (a symlink of that name leads out) fails rendering with KNV1068 naming the file; nothing outside reaches the output and no URL is fetched", async (t) => {
  const { secretText, outside, token } = await outsideToken(t);
  // A patch of the reconciler's, as a symlink named `10` would hand it to a PatchTransformer.
  const outsidePatch = join(outside, "patch.yaml");
  const leakPatch = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" }, data: { leak: secretText } };
  await writeFile(outsidePatch, yaml(leakPatch));
  const server = await httpServer(t, yaml({ ...leakPatch, metadata: { name: "fetched" } }));
  const cm = yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } });
  /** Renders a checkout of `files` (path → text, or a symlink's target) without shell; the rendered YAML. */
  const render = async (files: Record<string, string | { link: string }>): Promise<string> => {
    const root = await scratch(t);
    for (const [path, content] of Object.entries(files))
      if (typeof content === "string") {
        await mkdir(dirname(join(root, path)), { recursive: true });
        await writeFile(join(root, path), content);
      } else await symlink(content.link, join(root, path));
    const out = await renderKustomization(root, {
      tools: { dir: renderToolsDir },
      repositoryRoot: root,
      enableShell: false,
      signal: AbortSignal.timeout(120_000),
    });
    t.after(() => removeRendered(out));
    return readFile(join(out, "rendered.yaml"), "utf8");
  };
  // One entry `ok.txt<break>  - token` to the JS library, two to kustomize. In a kustomization below the
  // sync directory's: Config Sync's `kustomize edit` (origin annotations) rewrites that one.
  const generator = (lf: string): string =>
    `configMapGenerator:\n- name: leak\n  files:\n  - ok.txt${lf}  - ${token}\n`;
  const transform = "resources:\n- cm.yaml\ntransformers:\n- t.yaml\n";
  const patchTransformer = (path: string): string =>
    `apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: ${path}\n`;
  const lineBreaks: [string, string, string][] = [
    ["CR", "\r", "000D"],
    ["NEL", "\u0085", "0085"],
    ["LS", "\u2028", "2028"],
    ["PS", "\u2029", "2029"],
  ];
  const cases: [string, Record<string, string | { link: string }>, RegExp][] = [
    ...lineBreaks.map(([label, lf, code]): [string, Record<string, string>, RegExp] => [
      `a ${label} in a kustomization`,
      { "kustomization.yaml": "resources:\n- sub\n", "sub/kustomization.yaml": generator(lf), "sub/ok.txt": "ok\n" },
      new RegExp(`sub/kustomization\\.yaml: line 4 holds .*\\(U\\+${code}\\).*reads as a line break`),
    ]),
    [
      "a CR making a comment a key",
      {
        "kustomization.yaml": "resources:\n- sub\n",
        "sub/kustomization.yaml": `namePrefix: x-\n# note\rconfigMapGenerator:\r- name: leak\r  files: ["${token}"]\n`,
      },
      /sub\/kustomization\.yaml: line 2 holds a carriage return/,
    ],
    [
      "a CR in a plugin configuration file",
      {
        "kustomization.yaml": "generators:\n- gen.yaml\n",
        "gen.yaml": `apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: leak\nfiles:\n- ok.txt\r- ${token}\n`,
        "ok.txt": "ok\n",
      },
      /gen\.yaml: line 6 holds a carriage return/,
    ],
    [
      "an LS before a URL",
      {
        "kustomization.yaml": "resources:\n- sub\n",
        "sub/kustomization.yaml": `resources:\n  - cm.yaml\u2028  - ${server.url}/cm.yaml\n`,
        "sub/cm.yaml": cm,
      },
      /sub\/kustomization\.yaml: line 2 holds a line separator \(U\+2028\)/,
    ],
    // kustomize hands generators and patches to its plugins as YAML go-yaml writes and reads back, folding a NEL.
    [
      "a double-quoted \\N in a generator's file (kustomize reads `A B`)",
      {
        "kustomization.yaml": 'configMapGenerator:\n- name: leak\n  files: ["leak=A\\NB"]\n',
        "A B": { link: token },
      },
      /kustomization\.yaml: files "leak=A\\u0085B" holds a next-line character \(U\+0085\)/,
    ],
    [
      "a double-quoted \\x85 in a patch's path (kustomize reads `A B`)",
      {
        "kustomization.yaml": 'resources:\n- cm.yaml\npatches:\n- path: "A\\x85B"\n',
        "cm.yaml": cm,
        "A B": { link: outsidePatch },
      },
      /kustomization\.yaml: path "A\\u0085B" holds a next-line character/,
    ],
    // kyaml's go-yaml resolves each to 10, and kustomize reads the file `10`.
    ...["012", "0x0A", "1_0", "+10", "0b1010", "1e1"].map(
      (form): [string, Record<string, string | { link: string }>, RegExp] => [
        `a PatchTransformer path ${form}`,
        {
          "kustomization.yaml": transform,
          "cm.yaml": cm,
          "t.yaml": patchTransformer(form),
          "10": { link: outsidePatch },
        },
        new RegExp(`\\(PatchTransformer\\) in .*t\\.yaml: path ${form.replace("+", "\\+")} is a plain YAML number`),
      ],
    ),
    [
      "a PatchTransformer path 2001-12-14",
      {
        "kustomization.yaml": transform,
        "cm.yaml": cm,
        "t.yaml": patchTransformer("2001-12-14"),
        "2001-12-14T00:00:00Z": { link: outsidePatch },
      },
      /path 2001-12-14 is a plain YAML timestamp/,
    ],
  ];
  for (const [label, files, why] of cases)
    await t.test(label, async () => {
      await assert.rejects(render(files), (error: unknown) => {
        assert.ok(error instanceof RenderingError, String(error));
        assert.equal(error.code, KnvCode.Rendering);
        assert.match(error.message, why);
        assert.ok(!error.message.includes(secretText), "the secret is in the error");
        return true;
      });
    });
  assert.deepEqual(server.requests, [], "no URL was fetched");

  // Quoted, the name is the one kustomize reads; CRLF line ends are line ends to both parsers.
  const inside = yaml({ ...leakPatch, data: { patched: "from the repository" } });
  const rendered = await render({
    "kustomization.yaml": transform.replace(/\n/g, "\r\n"),
    "cm.yaml": cm,
    "t.yaml": patchTransformer('"012"'),
    "012": inside,
    "10": { link: outsidePatch },
  });
  assert.match(rendered, /patched: from the repository/);
  assert.ok(!rendered.includes(secretText));
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

test("a kustomization's chart repository that answers 503 or refuses connections fails rendering as a retry, as a spec.helm repository's does; a chart it lacks stays terminal", async (t) => {
  const unavailable = createServer((_request, response) => response.writeHead(503).end("Service Unavailable"));
  await new Promise<void>((resolve) => unavailable.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => unavailable.close(() => resolve())));
  const refusing = createServer();
  await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
  const port = (server: Server): number => (server.address() as { port: number }).port;
  const refusedUrl = `http://127.0.0.1:${port(refusing)}`;
  await new Promise<void>((resolve) => refusing.close(() => resolve()));
  const empty = await staticServer(t, () => ({ "/index.yaml": yaml({ apiVersion: "v1", entries: {} }) }));
  const repo = await scratch(t);
  const cases: [string, string, ErrorClass][] = [
    ["a repository answering 503", `http://127.0.0.1:${port(unavailable)}`, ErrorClass.Retry],
    ["a repository refusing connections", refusedUrl, ErrorClass.Retry],
    ["a repository without the chart", empty.url, ErrorClass.Terminal],
  ];
  for (const [i, [label, url, expected]] of cases.entries()) {
    const dir = join(repo, String(i));
    await mkdir(dir);
    const chart = { name: "web", repo: url, version: "1.0.0", releaseName: "web" };
    await writeFile(join(dir, "kustomization.yaml"), yaml({ helmCharts: [chart] }));
    await assert.rejects(
      renderKustomization(dir, {
        tools: { dir: renderToolsDir },
        repositoryRoot: repo,
        enableShell: false,
        signal: AbortSignal.timeout(120_000),
      }),
      (error: unknown) => {
        assert.ok(error instanceof RenderingError, `${label}: ${String(error)}`);
        assert.equal(error.code, KnvCode.Rendering, label);
        assert.equal(error.errorClass, expected, `${label}: ${error.message}`);
        return true;
      },
    );
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

test("a repository's helm plugins never run: helmGlobals.configHome needs enableShellInRendering, and even with it helm loads no plugin", async (t) => {
  const outside = await scratch(t);
  const marker = join(outside, "plugin-ran");
  // A chart index whose chart URL uses a protocol only the repository's downloader plugin handles.
  const server = await staticServer(t, () => ({ "/index.yaml": chartIndex("ec", "0.1.0", "evil://charts/ec.tgz") }));
  const root = await scratch(t);
  const plugin = join(root, "helmhome", ".data", "plugins", "evil");
  await mkdir(plugin, { recursive: true });
  await writeFile(
    join(plugin, "plugin.yaml"),
    yaml({ name: "evil", version: "0.1.0", downloaders: [{ command: "run.sh", protocols: ["evil"] }] }),
  );
  await writeFile(join(plugin, "run.sh"), `#!/bin/sh\necho ran > ${marker}\nexit 1\n`, { mode: 0o755 });
  await writeFile(
    join(root, "kustomization.yaml"),
    yaml({
      helmGlobals: { configHome: "helmhome" },
      helmCharts: [{ name: "ec", repo: server.url, version: "0.1.0", releaseName: "ec" }],
    }),
  );
  const render = (enableShell: boolean): Promise<string> =>
    renderKustomization(root, {
      tools: { dir: renderToolsDir },
      repositoryRoot: root,
      enableShell,
      signal: AbortSignal.timeout(120_000),
    });
  // kustomize points HELM_DATA_HOME (where helm finds plugins) into configHome: without shell it is refused.
  await assert.rejects(render(false), (error: unknown) => {
    assert.ok(error instanceof RenderingError, String(error));
    assert.match(error.message, /helmGlobals\.configHome "helmhome" .*enableShellInRendering/);
    return true;
  });
  assert.equal(await stat(marker).catch(() => undefined), undefined, "the plugin ran without shell");
  // With shell the repository's configHome is honoured, but helm is told to load plugins from an empty folder.
  await assert.rejects(render(true), (error: unknown) => {
    assert.ok(error instanceof RenderingError, String(error));
    assert.match(error.message, /"evil" not supported|protocol handler/);
    return true;
  });
  assert.ok(server.requests.includes("/index.yaml"), "helm reached the chart index");
  assert.equal(await stat(marker).catch(() => undefined), undefined, "the plugin ran with shell");
});

test("a chart pulled during the build cannot bring a symlink out of the checkout: helm unpacks every entry as a regular file", async (t) => {
  const { secretText, outside, token } = await outsideToken(t);
  // The chart archive holds files/secret as a symlink to the token (tar keeps symlinks).
  const chart = join(outside, "pc");
  await mkdir(join(chart, "templates"), { recursive: true });
  await mkdir(join(chart, "files"));
  await writeFile(join(chart, "Chart.yaml"), "apiVersion: v2\nname: pc\nversion: 0.1.0\n");
  await writeFile(join(chart, "values.yaml"), "{}\n");
  await writeFile(
    join(chart, "templates", "cm.yaml"),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pc\ndata:\n  secret: {{ .Files.Get "files/secret" | quote }}\n',
  );
  await symlink(token, join(chart, "files", "secret"));
  const tgz = join(outside, "pc-0.1.0.tgz");
  execFileSync("tar", ["-czf", tgz, "-C", outside, "pc"]);
  assert.match(execFileSync("tar", ["-tvzf", tgz], { encoding: "utf8" }), /pc\/files\/secret -> /);
  const archive = await readFile(tgz);
  const server = await staticServer(t, (url) => ({
    "/index.yaml": chartIndex("pc", "0.1.0", `${url}/pc-0.1.0.tgz`),
    "/pc-0.1.0.tgz": archive,
  }));
  const root = await scratch(t);
  // A charts folder in the checkout: the pull unpacks the chart into the render's mirror of it, past the walk.
  await mkdir(join(root, "charts"));
  await writeFile(join(root, "charts", "README"), "charts pulled by kustomize land here\n");
  await writeFile(
    join(root, "kustomization.yaml"),
    yaml({ helmCharts: [{ name: "pc", repo: server.url, version: "0.1.0", releaseName: "pc" }] }),
  );
  const out = await renderKustomization(root, {
    tools: { dir: renderToolsDir },
    repositoryRoot: root,
    enableShell: false,
    signal: AbortSignal.timeout(120_000),
  });
  t.after(() => removeRendered(out));
  const rendered = await readFile(join(out, "rendered.yaml"), "utf8");
  assert.match(rendered, /name: pc/);
  assert.ok(!rendered.includes(secretText), "the pulled chart read the token");
  assert.ok(server.requests.includes("/pc-0.1.0.tgz"), "the chart was pulled");
  assert.match(rendered, /secret: ""\n/, "helm wrote the symlink entry as an empty regular file");
  assert.equal(
    await lstat(join(root, "charts", "pc-0.1.0")).catch(() => undefined),
    undefined,
    "pulled into the checkout",
  );
});

test("a chart's values.schema.json referring outside itself (a file of the reconciler, a URL; in a subchart archive too) fails rendering with KNV1068: helm never loads it", async (t) => {
  const { secretText, outside } = await outsideToken(t);
  // A JSON file of the reconciler's, shaped so that helm's validation error would print what it holds.
  const secretJson = join(outside, "token.json");
  await writeFile(secretJson, JSON.stringify({ type: "string", const: secretText }));
  const server = await httpServer(t, JSON.stringify({ type: "string", const: secretText }));
  const refs = [`file://${secretJson}`, `${secretJson.slice(1)}`, `${server.url}/latest/meta-data`];
  const render = async (root: string): Promise<string> => {
    const out = await renderKustomization(root, {
      tools: { dir: renderToolsDir },
      repositoryRoot: root,
      enableShell: false,
      signal: AbortSignal.timeout(120_000),
    });
    t.after(() => removeRendered(out));
    return readFile(join(out, "rendered.yaml"), "utf8");
  };
  /** A checkout rendering chart `c` (values a: x) whose schema is `schema`; `subchart` is packaged by the real helm. */
  const chartRoot = async (schema: JsonObject, subchart?: JsonObject): Promise<string> => {
    const root = await scratch(t);
    const chart = join(root, "charts", "c");
    await mkdir(join(chart, "templates"), { recursive: true });
    await writeFile(join(root, "kustomization.yaml"), yaml({ helmCharts: [{ name: "c", releaseName: "c" }] }));
    await writeFile(join(chart, "Chart.yaml"), "apiVersion: v2\nname: c\nversion: 0.1.0\n");
    await writeFile(join(chart, "values.yaml"), "a: x\nsub:\n  a: x\n");
    await writeFile(join(chart, "templates", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n");
    await writeFile(join(chart, "values.schema.json"), JSON.stringify(schema));
    if (subchart !== undefined) {
      const sub = join(root, "sub-src", "sub");
      await mkdir(sub, { recursive: true });
      await writeFile(join(sub, "Chart.yaml"), "apiVersion: v2\nname: sub\nversion: 0.1.0\n");
      await writeFile(join(sub, "values.schema.json"), JSON.stringify(subchart));
      await mkdir(join(chart, "charts"));
      execFileSync(join(renderToolsDir, "helm"), ["package", "--destination", join(chart, "charts"), sub], {
        env: { HOME: root, PATH: "" },
      });
      await rm(join(root, "sub-src"), { recursive: true });
    }
    return root;
  };
  const object = (ref: string): JsonObject => ({ type: "object", properties: { a: { $ref: ref } } });
  for (const [label, schema, subchart] of [
    ...refs.map((ref) => [`$ref ${ref}`, object(ref), undefined] as const),
    [`$schema ${server.url}`, { $schema: `${server.url}/schema`, type: "object" }, undefined] as const,
    [`a subchart archive's $ref ${refs[0]}`, { type: "object" }, object(refs[0] ?? "")] as const,
  ]) {
    await assert.rejects(render(await chartRoot(schema, subchart)), (error: unknown) => {
      assert.ok(error instanceof RenderingError, `${label}: ${String(error)}`);
      assert.match(error.message, /values\.schema\.json refers to \$(ref|schema) /, label);
      assert.ok(!error.message.includes(secretText), `${label}: the render error holds the secret`);
      return true;
    });
  }
  assert.deepEqual(server.requests, [], "helm fetched a schema from the loopback server");
  // A schema referring inside itself, with a standard draft, renders as before.
  const good = {
    $schema: "http://json-schema.org/draft-07/schema#",
    definitions: { s: { type: "string" } },
    type: "object",
    properties: { a: { $ref: "#/definitions/s" } },
  };
  assert.match(await render(await chartRoot(good, good)), /name: c/);
  // So does a large one: an enum of 200,000 values (1.3 MB, within helm's 5 MiB per file).
  const many = { enum: Array.from({ length: 200_000 }, (_, i) => i) };
  assert.match(await render(await chartRoot({ ...good, definitions: { ...good.definitions, many } })), /name: c/);
});

/** A chart `name` 0.1.0 rendering ConfigMap `name` from values `a: x`, with `schema` as its values.schema.json. */
const schemaChart = (name: string, schema: JsonObject): ChartFiles => ({
  name,
  version: "0.1.0",
  files: {
    "values.yaml": "a: x\n",
    "values.schema.json": JSON.stringify(schema),
    "templates/cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: {{ .Values.a | quote }}\n`,
  },
});

/** Schemas that load a JSON file of the reconciler (whose const helm's error would print) or fetch a loopback probe. */
async function outsideSchemas(
  t: TestContext,
): Promise<{ secretText: string; probe: { requests: string[] }; refs: string[] }> {
  const { secretText, outside } = await outsideToken(t);
  const secretJson = join(outside, "token.json");
  await writeFile(secretJson, JSON.stringify({ type: "string", const: secretText }));
  const probe = await httpServer(t, JSON.stringify({ type: "string", const: secretText }));
  return { secretText, probe, refs: [`file://${secretJson}`, `${probe.url}/probe`] };
}

/** What `attempt` failed with for each of `refs` (undefined: it did not fail), each shown as a diagnostic. */
async function failures(
  t: TestContext,
  refs: readonly string[],
  attempt: (i: number) => Promise<unknown>,
): Promise<[string, unknown][]> {
  const found: [string, unknown][] = [];
  for (const [i, ref] of refs.entries()) {
    const error = await attempt(i).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.diagnostic(`${ref}: ${String(error)}`);
    found.push([ref, error]);
  }
  return found;
}

const externalRef = (ref: string): JsonObject => ({ type: "object", properties: { a: { $ref: ref } } });
const internalRefs: JsonObject = {
  $schema: "http://json-schema.org/draft-07/schema#",
  definitions: { s: { type: "string" } },
  type: "object",
  properties: { a: { $ref: "#/definitions/s" } },
};

test("a Helm source (spec.helm) pulls its chart and checks its values.schema.json before helm loads it: a reference outside the schema (a file of the reconciler, a URL) is refused with KNV2004, unless enableShellInRendering; a chart referring inside itself renders", async (t) => {
  const { secretText, probe, refs } = await outsideSchemas(t);
  const repo = await startHelmRepo(t);
  for (const [i, ref] of refs.entries()) await repo.publish(schemaChart(`bad${i}`, externalRef(ref)));
  await repo.publish(schemaChart("good", internalRefs));
  const source = new HelmSource(await scratch(t), renderToolsDir);
  const fetch = (chart: string, enableShell = false): Promise<FetchResult> =>
    source.fetch({
      spec: { repo: repo.url, chart, version: "0.1.0", auth: "token", period: "1h" },
      releaseNamespace: "default",
      credentials: { basic: { username: repo.username, password: repo.password }, caCert: repo.caCert },
      valuesFiles: [],
      enableShell,
      signal: AbortSignal.timeout(120_000),
    });
  const errors = await failures(t, refs, (i) => fetch(`bad${i}`));
  assert.deepEqual(probe.requests, [], "helm fetched a schema from the loopback probe");
  for (const [ref, error] of errors) {
    assert.ok(error instanceof HelmSourceError, `${ref}: ${String(error)}`);
    assert.equal(error.code, KnvCode.SourceFetch);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.match(error.message, /bad\d-0\.1\.0\.tgz:bad\d\/values\.schema\.json refers to \$ref /, ref);
    assert.ok(!error.message.includes(secretText), `${ref}: the source error holds the secret`);
  }
  // With shell the chart's schemas are left to helm, as in a repository's chart.
  await assert.rejects(fetch("bad1", true), HelmSourceError);
  assert.deepEqual(probe.requests, ["/probe"], "with shell, helm loads the schema itself");
  const good = await fetch("good");
  assert.equal(good.commit, "0.1.0");
  assert.match(await readFile(join(good.sourceDir, "templates", "cm.yaml"), "utf8"), /name: good\n.*\n  a: "x"/s);
});

test("a chart kustomize would pull (helmCharts with repo) is pulled into its chart home and checked first: a values.schema.json referring outside itself (a file of the reconciler, a URL) fails rendering with KNV1068, unless enableShellInRendering; a pulled chart referring inside itself renders and is not pulled twice", async (t) => {
  const { secretText, probe, refs } = await outsideSchemas(t);
  const archives = await scratch(t);
  const charts = [...refs.map((ref, i) => schemaChart(`bad${i}`, externalRef(ref))), schemaChart("good", internalRefs)];
  const served: Record<string, Buffer> = {};
  for (const chart of charts)
    served[`/${chart.name}-0.1.0.tgz`] = await readFile(await packageChart(t, chart, archives));
  const server = await staticServer(t, (url) => ({
    ...served,
    "/index.yaml": yaml({
      apiVersion: "v1",
      entries: Object.fromEntries(
        charts.map((c) => [
          c.name,
          [{ apiVersion: "v2", name: c.name, version: "0.1.0", urls: [`${url}/${c.name}-0.1.0.tgz`] }],
        ]),
      ),
      generated: "2026-01-01T00:00:00Z",
    }),
  }));
  const render = async (
    chart: JsonObject,
    { enableShell = false, chartsDir = true } = {},
  ): Promise<{ root: string; rendered: string }> => {
    const root = await scratch(t);
    // A charts folder in the checkout or not: pulled charts land in the build's mirror either way.
    if (chartsDir) await mkdir(join(root, "charts"));
    await writeFile(join(root, "kustomization.yaml"), yaml({ helmCharts: [{ repo: server.url, ...chart }] }));
    const out = await renderKustomization(root, {
      tools: { dir: renderToolsDir },
      repositoryRoot: root,
      enableShell,
      signal: AbortSignal.timeout(120_000),
    });
    t.after(() => removeRendered(out));
    return { root, rendered: await readFile(join(out, "rendered.yaml"), "utf8") };
  };
  const errors = await failures(t, refs, (i) => render({ name: `bad${i}`, version: "0.1.0", releaseName: "r" }));
  assert.deepEqual(probe.requests, [], "helm fetched a schema from the loopback probe");
  for (const [ref, error] of errors) {
    assert.ok(error instanceof RenderingError, `${ref}: ${String(error)}`);
    assert.match(error.message, /charts\/bad\d-0\.1\.0\/bad\d\/values\.schema\.json refers to \$ref /, ref);
    assert.ok(!error.message.includes(secretText), `${ref}: the render error holds the secret`);
  }
  await assert.rejects(
    render({ name: "bad1", version: "0.1.0", releaseName: "r" }, { enableShell: true }),
    RenderingError,
  );
  assert.deepEqual(probe.requests, ["/probe"], "with shell, kustomize's helm loads the schema itself");
  // With a version kustomize looks in charts/<name>-<version>/<name>, without one in charts/<name>: were the
  // chart anywhere else, kustomize would pull it a second time.
  for (const [chart, dir] of [
    [{ name: "good", version: "0.1.0", releaseName: "r" }, join("charts", "good-0.1.0", "good")],
    [{ name: "good" }, join("charts", "good")],
    [{ name: "good", version: "0.1.0" }, undefined],
  ] as const) {
    const pulls = server.requests.filter((r) => r === "/good-0.1.0.tgz").length;
    const { root, rendered } = await render(chart, { chartsDir: dir !== undefined });
    assert.match(rendered, /name: good\n/);
    assert.equal(server.requests.filter((r) => r === "/good-0.1.0.tgz").length, pulls + 1, `${dir}: pulled once`);
    if (dir !== undefined)
      assert.equal(await stat(join(root, dir)).catch(() => undefined), undefined, `${dir}: written`);
  }
});
