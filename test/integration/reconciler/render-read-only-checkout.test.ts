/**
 * A render never writes into the checkout (the reconciler's own, read-only to the render container):
 * remote charts a kustomization pulls go into the render's mirror of it, whichever kustomization of the
 * tree names them, while kustomize reads them where Config Sync's in-place pull would have put them;
 * with shell access kustomize pulls them itself, into the same chart homes of the mirror.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { lstat, mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KnvCode } from "@driftless/api";
import { removeRendered, renderKustomization, RenderingError } from "@driftless/sync/render";
import { packageChart } from "../../support/helm-repo.ts";
import { removeAfter, removeQuietly } from "../../support/index.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();

const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);

async function scratch(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-ro-checkout-"));
  // Writable again first, so that a run as another user than root can remove it.
  t.after(async () => {
    execFileSync("chmod", ["-R", "u+w", dir]);
    await removeQuietly(dir);
  });
  return dir;
}

/** A loopback chart repository serving chart `hello` 0.1.0 (packaged by the real helm); counts archive downloads. */
async function chartRepository(t: TestContext): Promise<{ url: string; pulls: () => number }> {
  const out = await mkdtemp(join(tmpdir(), "driftless-ro-charts-"));
  removeAfter(t, out);
  const template =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hello\ndata:\n  from: remote\n";
  const archive = await readFile(
    await packageChart(
      t,
      { name: "hello", version: "0.1.0", files: { "values.yaml": "{}\n", "templates/cm.yaml": template } },
      out,
    ),
  );
  const requests: string[] = [];
  let index = "";
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? "");
    if (request.url === "/index.yaml") response.writeHead(200).end(index);
    else if (request.url === "/hello-0.1.0.tgz") response.writeHead(200).end(archive);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  const url = `http://127.0.0.1:${address.port}`;
  index = yaml({
    apiVersion: "v1",
    entries: { hello: [{ apiVersion: "v2", name: "hello", version: "0.1.0", urls: [`${url}/hello-0.1.0.tgz`] }] },
    generated: "2026-01-01T00:00:00Z",
  });
  return { url, pulls: () => requests.filter((r) => r === "/hello-0.1.0.tgz").length };
}

/** Every path below `root` with its type, size and mode: what a write into the checkout would change. */
async function tree(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true });
  const lines = await Promise.all(
    entries.map(async (path) => {
      const s = await lstat(join(root, path));
      const type = s.isSymbolicLink() ? "link" : s.isDirectory() ? "dir" : "file";
      return `${path} ${type} ${s.isDirectory() ? "" : s.size} ${(s.mode & 0o7777).toString(8)}`;
    }),
  );
  return lines.sort();
}

async function render(t: TestContext, root: string, dir: string, enableShell = false): Promise<string> {
  const out = await renderKustomization(join(root, dir), {
    tools: { dir: renderToolsDir },
    repositoryRoot: root,
    enableShell,
    signal: AbortSignal.timeout(120_000),
  });
  t.after(() => removeRendered(out));
  return readFile(join(out, "rendered.yaml"), "utf8");
}

test("remote helmCharts of a base, beside a chart home the checkout has, or with originAnnotations listed, render from the render's own mirror: the read-only checkout is not written", async (t) => {
  const repo = await chartRepository(t);
  const root = await scratch(t);
  const hello = { name: "hello", repo: repo.url, version: "0.1.0", releaseName: "hello" };
  const write = async (path: string, content: string): Promise<void> => {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), content);
  };
  // A base pulling a remote chart, below an overlay (the sync directory), directly and through a symlink.
  await write("base/kustomization.yaml", yaml({ helmCharts: [hello] }));
  await write("overlay/kustomization.yaml", yaml({ resources: ["../base"], namePrefix: "o-" }));
  await write("linked/kustomization.yaml", yaml({ resources: ["base"], namePrefix: "l-" }));
  await symlink("../base", join(root, "linked", "base"));
  // A sync directory whose chart home the checkout has already (a local chart beside the remote one).
  await write("app/charts/local/Chart.yaml", "apiVersion: v2\nname: local\nversion: 0.1.0\n");
  await write("app/charts/local/values.yaml", "{}\n");
  await write("app/charts/local/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n");
  await write("app/kustomization.yaml", yaml({ helmCharts: [{ name: "local", releaseName: "local" }, hello] }));
  // A kustomization asking for origins itself: Config Sync leaves it as it is.
  await write("annotated/kustomization.yaml", yaml({ buildMetadata: ["originAnnotations"], helmCharts: [hello] }));
  execFileSync("chmod", ["-R", "a-w", root]);
  // As root (process mode) the mode does not stop a write: the tree must be unchanged all the same.
  const before = await tree(root);

  const origin = (path: string): string =>
    `configuredIn: ${path}\n      configuredBy:\n        apiVersion: builtin\n        kind: HelmChartInflationGenerator`;
  for (const [dir, names, configuredIn] of [
    ["overlay", ["o-hello-hello"], "../base/kustomization.yaml"],
    ["linked", ["l-hello-hello"], "base/kustomization.yaml"],
    ["app", ["local", "hello-hello"], "kustomization.yaml"],
    ["annotated", ["hello-hello"], "kustomization.yaml"],
  ] as const) {
    const pulls = repo.pulls();
    const rendered = await render(t, root, dir);
    assert.deepEqual(await tree(root), before, `${dir}: the render wrote into the checkout`);
    for (const name of names) assert.match(rendered, new RegExp(`\n  name: ${name}\n`), `${dir}: ${name}`);
    assert.match(rendered, /from: remote/, `${dir}: the remote chart's object`);
    assert.ok(rendered.includes(origin(configuredIn)), `${dir}: origin as Config Sync writes it:\n${rendered}`);
    // The chart is where kustomize reads it: kustomize pulled nothing itself.
    assert.equal(repo.pulls(), pulls + 1, `${dir}: pulled once`);
  }
});

test("with enableShellInRendering, kustomize's own pulls of a base's remote chart, or beside a chart home the checkout has, land in the render's mirror: the read-only checkout is not written", async (t) => {
  const repo = await chartRepository(t);
  const root = await scratch(t);
  const hello = { name: "hello", repo: repo.url, version: "0.1.0", releaseName: "hello" };
  const write = async (path: string, content: string): Promise<void> => {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), content);
  };
  await write("base/kustomization.yaml", yaml({ helmCharts: [hello] }));
  await write("overlay/kustomization.yaml", yaml({ resources: ["../base"], namePrefix: "o-" }));
  await write("app/charts/README.md", "charts pulled here\n");
  await write("app/kustomization.yaml", yaml({ helmCharts: [hello] }));
  execFileSync("chmod", ["-R", "a-w", root]);
  const before = await tree(root);

  for (const [dir, name] of [
    ["overlay", "o-hello-hello"],
    ["app", "hello-hello"],
  ] as const) {
    const pulls = repo.pulls();
    const rendered = await render(t, root, dir, true);
    assert.deepEqual(await tree(root), before, `${dir}: the render wrote into the checkout`);
    assert.match(rendered, new RegExp(`\n  name: ${name}\n`), `${dir}: ${name}`);
    assert.match(rendered, /from: remote/, `${dir}: the remote chart's object`);
    // kustomize pulled the chart itself, once.
    assert.equal(repo.pulls(), pulls + 1, `${dir}: pulled once`);
  }
});

test("a remote chart whose chart home is a file of the checkout fails rendering with KNV1068 naming it, not a raw file-system error", async (t) => {
  const repo = await chartRepository(t);
  const root = await scratch(t);
  await mkdir(join(root, "base"));
  await writeFile(join(root, "base", "charts"), "not a folder\n");
  await writeFile(
    join(root, "base", "kustomization.yaml"),
    yaml({ helmCharts: [{ name: "hello", repo: repo.url, version: "0.1.0", releaseName: "hello" }] }),
  );
  await mkdir(join(root, "overlay"));
  await writeFile(join(root, "overlay", "kustomization.yaml"), yaml({ resources: ["../base"] }));
  const before = await tree(root);
  await assert.rejects(render(t, root, "overlay"), (error: unknown) => {
    assert.ok(error instanceof RenderingError, String(error));
    assert.equal(error.code, KnvCode.Rendering);
    assert.match(
      error.message,
      /base\/kustomization\.yaml: helmCharts: the chart pulled for "hello" cannot be unpacked into charts\/hello-0\.1\.0/,
    );
    return true;
  });
  assert.deepEqual(await tree(root), before);
});
