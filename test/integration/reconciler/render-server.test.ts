/**
 * The render server a reconciler pod's hydration-controller container runs, and the reconciler's
 * client of it, for real: the real kustomize over a real unix socket, checkouts under a source root.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ErrorClass } from "@driftless/api";
import {
  removeRendered,
  renderKustomization,
  RenderingError,
  RenderServerUnavailableError,
  renderThroughServer,
  serveRenders,
  type RenderServer,
} from "@driftless/sync/render";
import { removeAfter } from "../../support/index.ts";
import { buildRenderTools } from "../../support/render-tools.ts";

const renderToolsDir = buildRenderTools();
const tools = { dir: renderToolsDir };

const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);

interface Setup {
  readonly root: string;
  readonly sourceRoot: string;
  readonly server: RenderServer;
}

async function setUp(t: TestContext, options: { maxDeadlineMs?: number } = {}): Promise<Setup> {
  const root = await mkdtemp(join(tmpdir(), "driftless-render-server-"));
  removeAfter(t, root);
  const sourceRoot = join(root, "cache");
  await mkdir(sourceRoot);
  const server = await serveRenders({ socketPath: join(root, "render.sock"), sourceRoot, tools, ...options });
  t.after(() => server.close());
  return { root, sourceRoot, server };
}

async function write(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), content);
  }
}

/** A generator that runs `script` (a shell script) as an exec KRM function: code from the repository. */
async function writeExecFunction(dir: string, script: string): Promise<void> {
  await write(dir, {
    "kustomization.yaml": yaml({ generators: ["gen.yaml"] }),
    "gen.yaml": yaml({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "gen", annotations: { "config.kubernetes.io/function": "exec:\n  path: ./gen.sh\n" } },
    }),
    "gen.sh": `#!/bin/sh\n${script}\n`,
  });
  await chmod(join(dir, "gen.sh"), 0o755);
}

async function filesOf(out: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of (await readdir(out)).sort()) files[name] = await readFile(join(out, name), "utf8");
  return files;
}

/** The repository root is the sync directory's parent: the tests' kustomizations name `../base` at most. */
const options = (dir: string, enableShell = false) => ({
  tools,
  repositoryRoot: dirname(dir),
  enableShell,
  signal: AbortSignal.timeout(60_000),
});

test("renders a kustomization through the render server over a unix socket, byte for byte as kustomize does in process", async (t) => {
  const { sourceRoot, server } = await setUp(t);
  const dir = join(sourceRoot, "checkout", "config");
  await write(join(sourceRoot, "checkout"), {
    "base/kustomization.yaml": yaml({ resources: ["cm.yaml"] }),
    "base/cm.yaml": yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings" }, data: { a: "1" } }),
    "config/kustomization.yaml": yaml({
      namePrefix: "p-",
      resources: ["../base"],
      configMapGenerator: [{ name: "generated", literals: ["color=green"] }],
    }),
  });
  const out = await renderThroughServer(server.socketPath)(dir, options(dir));
  t.after(() => removeRendered(out));
  const direct = await renderKustomization(dir, options(dir));
  t.after(() => removeRendered(direct));
  const received = await filesOf(out);
  assert.deepEqual(received, await filesOf(direct));
  assert.match(Object.values(received).join(""), /name: p-generated-/);
  assert.match(Object.values(received).join(""), /name: p-settings/);
});

test("a kustomize failure comes back as a RenderingError carrying kustomize's message", async (t) => {
  const { sourceRoot, server } = await setUp(t);
  const dir = join(sourceRoot, "broken");
  await write(dir, { "kustomization.yaml": yaml({ resources: ["missing.yaml"] }) });
  await assert.rejects(renderThroughServer(server.socketPath)(dir, options(dir)), (error: unknown) => {
    assert.ok(error instanceof RenderingError, String(error));
    assert.equal(error.code, "KNV1068");
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.match(error.message, /missing\.yaml/);
    return true;
  });
});

test("refuses a directory outside its source root, also through a symlink inside it", async (t) => {
  const { root, sourceRoot, server } = await setUp(t);
  const outside = join(root, "outside");
  await write(outside, {
    "kustomization.yaml": yaml({ resources: ["cm.yaml"] }),
    "cm.yaml": yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "outside" } }),
  });
  await symlink(outside, join(sourceRoot, "link"));
  const render = renderThroughServer(server.socketPath);
  for (const dir of [outside, join(sourceRoot, "link"), join(sourceRoot, "..", "outside"), "relative/dir"]) {
    await assert.rejects(render(dir, options(dir)), (error: unknown) => {
      assert.ok(error instanceof RenderingError, `${dir}: ${String(error)}`);
      assert.match(error.message, /source root|absolute path/);
      return true;
    });
  }
});

test("refuses a repository root outside its source root, so the confinement walk cannot be widened", async (t) => {
  const { sourceRoot, server } = await setUp(t);
  const dir = join(sourceRoot, "checkout", "config");
  await write(dir, {
    "kustomization.yaml": yaml({ resources: ["cm.yaml"] }),
    "cm.yaml": yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "inside" } }),
  });
  await assert.rejects(
    renderThroughServer(server.socketPath)(dir, { ...options(dir), repositoryRoot: "/" }),
    (error: unknown) => {
      assert.ok(error instanceof RenderingError, String(error));
      assert.match(error.message, /source root/);
      return true;
    },
  );
});

test("stops a render past its deadline and says so", async (t) => {
  const { sourceRoot, server } = await setUp(t);
  const dir = join(sourceRoot, "slow");
  await writeExecFunction(dir, "sleep 60");
  const started = Date.now();
  await assert.rejects(
    renderThroughServer(server.socketPath, { deadlineMs: 1_500 })(dir, options(dir, true)),
    (error: unknown) => {
      assert.ok(error instanceof RenderingError, String(error));
      assert.match(error.message, /took longer than 2 s/);
      assert.equal(error.errorClass, ErrorClass.Retry, "a render stopped at its deadline is retried, as in process");
      return true;
    },
  );
  assert.ok(Date.now() - started < 20_000, `the deadline was not kept: ${Date.now() - started} ms`);
});

test("a render server that is not listening is an error the pass retries", async (t) => {
  const { root } = await setUp(t);
  await assert.rejects(
    renderThroughServer(join(root, "nobody.sock"))(join(root, "cache"), options(join(root, "cache"))),
    (error: unknown) => {
      assert.ok(error instanceof RenderServerUnavailableError, String(error));
      assert.equal(error.errorClass, ErrorClass.Retry);
      assert.match(error.message, /hydration-controller/);
      return true;
    },
  );
});

test("a render failure that passes by itself (a chart repository answering 503, the server busy) comes back as a retry, as in process", async (t) => {
  const root = await mkdtemp(join(tmpdir(), "driftless-render-server-"));
  removeAfter(t, root);
  const sourceRoot = join(root, "cache");
  await mkdir(join(sourceRoot, "held"), { recursive: true });
  await mkdir(join(sourceRoot, "unavailable"));
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const server = await serveRenders({
    socketPath: join(root, "render.sock"),
    sourceRoot,
    tools,
    maxConcurrent: 1,
    render: async (dir) => {
      if (dir.endsWith("held")) await held;
      throw new RenderingError("helm pull failed: 503 Service Unavailable", undefined, ErrorClass.Retry);
    },
  });
  t.after(() => server.close());
  const render = renderThroughServer(server.socketPath);
  const unavailable = join(sourceRoot, "unavailable");
  const isRetry = (what: string) => (error: unknown) => {
    assert.ok(error instanceof RenderingError, `${what}: ${String(error)}`);
    assert.equal(error.errorClass, ErrorClass.Retry, `${what}: ${error.message}`);
    return true;
  };
  await assert.rejects(render(unavailable, options(unavailable)), isRetry("the chart repository's 503"));
  const first = render(join(sourceRoot, "held"), options(join(sourceRoot, "held")));
  first.catch(() => undefined);
  await assert.rejects(
    eventuallyBusy(() => render(unavailable, options(unavailable))),
    isRetry("the server busy with another render"),
  );
  release();
  await assert.rejects(first, isRetry("the held render"));
});

/** The first failure of `attempt` that says the server is busy (the held render may not have begun yet). */
async function eventuallyBusy(attempt: () => Promise<string>): Promise<string> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (error instanceof Error && /busy/.test(error.message)) throw error;
    }
  }
}

test("refuses a request that is not one, and keeps serving", async (t) => {
  const { sourceRoot, server } = await setUp(t);
  // Whatever the server said before it closed the connection (it may reset it: that is an answer too).
  const answer = (request: string): Promise<string> =>
    new Promise((resolve) => {
      const socket = createConnection(server.socketPath);
      let data = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => (data += chunk));
      socket.on("close", () => resolve(data));
      socket.on("error", () => undefined);
      socket.end(request);
    });
  assert.match(await answer("not json\n"), /"ok":false.*not JSON/);
  assert.match(await answer(`${JSON.stringify({ dir: sourceRoot })}\n`), /repositoryRoot/);
  // A line longer than a request may be: the server hangs up rather than read on.
  assert.equal(await answer(`${"x".repeat(200_000)}\n`), "");
  const dir = join(sourceRoot, "fine");
  await write(dir, {
    "kustomization.yaml": yaml({ resources: ["cm.yaml"] }),
    "cm.yaml": yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "fine" } }),
  });
  const out = await renderThroughServer(server.socketPath)(dir, options(dir));
  t.after(() => removeRendered(out));
  assert.match(Object.values(await filesOf(out)).join(""), /name: fine/);
});

test("code run while rendering (an exec function) finds no credential in its environment and no inherited socket", async (t) => {
  const { sourceRoot, server } = await setUp(t);
  const dir = join(sourceRoot, "spy");
  // What a hostile repository would look for: the environment, and open descriptors (the reconciler's
  // connections to Redis and the API server are sockets; so is the render server's own).
  await writeExecFunction(
    dir,
    [
      `env | sort > /dev/null`,
      `found="$(env | cut -d= -f1 | sort | tr '\\n' ' ')"`,
      `sockets=""`,
      `for fd in /proc/self/fd/*; do target=$(readlink "$fd"); case "$target" in socket:*) [ "\${fd##*/}" -gt 2 ] && sockets="$sockets \${fd##*/}";; esac; done`,
      `printf 'apiVersion: config.kubernetes.io/v1\\nkind: ResourceList\\nitems:\\n- apiVersion: v1\\n  kind: ConfigMap\\n  metadata:\\n    name: spy\\n  data:\\n    env: "%s"\\n    sockets: "%s"\\n' "$found" "$sockets"`,
    ].join("\n"),
  );
  // The renderer's own process holds a credential in its environment, as a reconciler does.
  const before = process.env["REDIS_PASSWORD"];
  process.env["REDIS_PASSWORD"] = "hunter2";
  t.after(() => {
    if (before === undefined) delete process.env["REDIS_PASSWORD"];
    else process.env["REDIS_PASSWORD"] = before;
  });
  const out = await renderThroughServer(server.socketPath)(dir, options(dir, true));
  t.after(() => removeRendered(out));
  const rendered = Object.values(await filesOf(out)).join("");
  const env = /env: (.*)/.exec(rendered)?.[1] ?? "";
  const names = env.replace(/["']/g, "").trim().split(/\s+/);
  assert.ok(names.includes("HOME"), `the exec function ran and reported: ${rendered}`);
  assert.deepEqual(
    names.filter(
      (n) =>
        ![
          "HOME",
          "PATH",
          "PWD",
          "XDG_CACHE_HOME",
          "XDG_CONFIG_HOME",
          "XDG_DATA_HOME",
          "HELM_PLUGINS",
          "TMPDIR", // inside the render's own folder
        ].includes(n),
    ),
    [],
  );
  assert.doesNotMatch(rendered, /hunter2/);
  assert.match(rendered, /sockets: ""|sockets: ''/, `sockets beyond stdio: ${rendered}`);
});

test("kustomize, helm and exec functions keep their temporary files in the render's own folder, which goes with it", async (t) => {
  const root = await mkdtemp(join(tmpdir(), "driftless-render-tmp-"));
  removeAfter(t, root);
  const dir = join(root, "app");
  await writeExecFunction(
    dir,
    [
      "cat >/dev/null",
      'printf \'apiVersion: config.kubernetes.io/v1\\nkind: ResourceList\\nitems:\\n- apiVersion: v1\\n  kind: ConfigMap\\n  metadata:\\n    name: tmp\\n  data:\\n    tmp: "%s"\\n\' "$TMPDIR"',
    ].join("\n"),
  );
  const out = await renderKustomization(dir, options(dir, true));
  t.after(() => removeRendered(out));
  const rendered = Object.values(await filesOf(out)).join("\n");
  const tmp = /tmp: "?([^"\n]*)"?/.exec(rendered)?.[1];
  // The render's folder (out's parent), which a stop removes and the next start sweeps after a kill.
  assert.equal(tmp, join(dirname(out), "tmp"), rendered);
});
