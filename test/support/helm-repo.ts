/**
 * Helm charts for tests, packaged with the real `helm package`: a chart repository (index.yaml and
 * .tgz files) served by a small static HTTPS server on loopback with basic auth, and charts pushed to
 * a real OCI registry with `helm push`.
 */
import { execFile } from "node:child_process";
import { readFile, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { basename, join, normalize } from "node:path";
import type { TestContext } from "node:test";
import { promisify } from "node:util";
import { defaultRenderToolsDir } from "@driftless/sync/render";
import type { Registry } from "./registry.ts";
import { selfSignedCert } from "./registry.ts";
import { removeAfter, removeQuietly } from "./cleanup.ts";

const run = promisify(execFile);

/** The helm built for rendering (packages/sync/scripts/build-render-tools.sh). */
export function helmBinary(): string {
  const dir = defaultRenderToolsDir();
  if (dir === undefined) throw new Error("helm is not built: run bash packages/sync/scripts/build-render-tools.sh");
  return join(dir, "helm");
}

export interface ChartFiles {
  readonly name: string;
  readonly version: string;
  /** Extra files by path inside the chart (templates/..., crds/..., values.yaml). */
  readonly files: Readonly<Record<string, string>>;
}

/** A private HOME for helm, so the test's logins and caches touch nothing else. */
async function helmHome(t: TestContext): Promise<NodeJS.ProcessEnv> {
  const home = await mkdtemp(join(tmpdir(), "driftless-helm-home-"));
  removeAfter(t, home);
  return {
    HOME: home,
    PATH: process.env["PATH"] ?? "",
    XDG_CACHE_HOME: join(home, "c"),
    XDG_CONFIG_HOME: join(home, "f"),
    XDG_DATA_HOME: join(home, "d"),
  };
}

/** `helm package` of a chart written from `chart`; returns the .tgz path. */
export async function packageChart(t: TestContext, chart: ChartFiles, outDir: string): Promise<string> {
  const src = await mkdtemp(join(tmpdir(), "driftless-chart-"));
  removeAfter(t, src);
  const dir = join(src, chart.name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "Chart.yaml"), `apiVersion: v2\nname: ${chart.name}\nversion: ${chart.version}\n`);
  for (const [path, content] of Object.entries(chart.files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  const env = await helmHome(t);
  await run(helmBinary(), ["package", dir, "--destination", outDir], { env });
  return join(outDir, `${chart.name}-${chart.version}.tgz`);
}

export interface HelmRepo {
  /** `https://127.0.0.1:<port>/charts` */
  readonly url: string;
  readonly username: string;
  readonly password: string;
  readonly caCert: string;
  /** Packages the chart into the repository and re-indexes it. */
  publish(chart: ChartFiles): Promise<void>;
}

/** A chart repository over HTTPS with basic auth, served from a folder `helm repo index` keeps current. */
export async function startHelmRepo(t: TestContext): Promise<HelmRepo> {
  const root = await mkdtemp(join(tmpdir(), "driftless-helm-repo-"));
  const charts = join(root, "charts");
  await mkdir(charts);
  const { cert, key } = await selfSignedCert(root);
  const username = "charts";
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  const server: Server = createServer({ cert: await readFile(cert), key: await readFile(key) }, (request, response) => {
    if (request.headers.authorization !== expected) {
      response.writeHead(401, { "www-authenticate": 'Basic realm="charts"' }).end();
      return;
    }
    const path = normalize(decodeURIComponent(new URL(request.url ?? "/", "https://x").pathname));
    if (!path.startsWith("/charts/")) {
      response.writeHead(404).end();
      return;
    }
    readFile(join(charts, basename(path))).then(
      (body) => response.writeHead(200, { "content-length": body.length }).end(body),
      () => response.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  const url = `https://127.0.0.1:${address.port}/charts`;
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await removeQuietly(root);
  });
  const env = await helmHome(t);
  return {
    url,
    username,
    password,
    caCert: await readFile(cert, "utf8"),
    async publish(chart: ChartFiles): Promise<void> {
      await packageChart(t, chart, charts);
      await run(helmBinary(), ["repo", "index", charts, "--url", url], { env });
    },
  };
}

/** `helm push` of a packaged chart to `oci://<registry>/<path>`, after `helm registry login`. */
export async function pushChart(t: TestContext, registry: Registry, path: string, chart: ChartFiles): Promise<void> {
  const out = await mkdtemp(join(tmpdir(), "driftless-chart-tgz-"));
  removeAfter(t, out);
  const tgz = await packageChart(t, chart, out);
  const env = await helmHome(t);
  // The password goes through stdin, as a user would type it, not on the command line.
  await new Promise<void>((resolve, reject) => {
    const child = execFile(
      helmBinary(),
      [
        "registry",
        "login",
        registry.host,
        "--username",
        registry.username,
        "--password-stdin",
        "--ca-file",
        registry.caFile,
      ],
      { env },
      (error) => (error === null ? resolve() : reject(error)),
    );
    child.stdin?.end(registry.password);
  });
  await run(helmBinary(), ["push", tgz, `oci://${registry.host}/${path}`, "--ca-file", registry.caFile], { env });
}
