/**
 * Rendering a sync directory that holds a kustomization with the real `kustomize build` (Helm charts
 * through the real `helm`, `--enable-helm`), as Config Sync's hydration-controller does.
 */
import { access, constants, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { ErrorClass } from "@driftless/api";
import { pullCharts } from "./chart-pulls.ts";
import { checkKustomizationPaths, kustomizationFileNames } from "./kustomization-paths.ts";
import { buildDirectory, type BuildDirectory } from "./origin-annotations.ts";
import { fileErrorClass, RenderingError } from "./render-error.ts";
import { runTool, ToolExit, ToolProcessError } from "./run-tool.ts";

export { RenderingError } from "./render-error.ts";

/** Config Sync's status.rendering messages. */
export const RenderingMessage = {
  Succeeded: "Rendering succeeded",
  Failed: "Rendering failed",
  Skipped: "Rendering skipped",
  /** Deployment mode: the source needs rendering and the pod has no render container yet. */
  Required: "Rendering required but is currently disabled",
} as const;
export type RenderingMessage = (typeof RenderingMessage)[keyof typeof RenderingMessage];

/** Where the tools are: a folder holding `kustomize` and `helm`, or undefined for PATH. */
export interface RenderTools {
  readonly dir?: string | undefined;
}

export interface RenderOptions {
  readonly tools: RenderTools;
  /** The checkout's root: every file the kustomization names must be inside it (`dir` is inside too). */
  readonly repositoryRoot: string;
  /** spec.override.enableShellInRendering: remote bases (git), URL resources and exec plugins. */
  readonly enableShell: boolean;
  readonly signal: AbortSignal;
  /** Deadline of one `kustomize build`, helm and any download included; default renderTimeoutMs. */
  readonly timeoutMs?: number | undefined;
}

/** A render (kustomize, the helm it runs, its downloads) that takes longer is killed: a hung server never holds a pass. */
export const renderTimeoutMs = 5 * 60_000;

/** True when the sync directory itself holds a kustomization (not a subdirectory: Config Sync's rule). */
export async function needsRendering(dir: string): Promise<boolean> {
  return (await kustomizationFileIn(dir)) !== undefined;
}

/** The name of the kustomization file in `dir` itself, if any. */
export async function kustomizationFileIn(dir: string): Promise<string | undefined> {
  // Three stats, not a listing: a sync directory may hold 10,000 files, and every pass asks.
  for (const name of kustomizationFileNames) {
    const found = await stat(join(dir, name)).then(
      (s) => !s.isDirectory(),
      () => false,
    );
    if (found) return name;
  }
  return undefined;
}

/**
 * The first kustomization file below `dir` (relative to it; breadth first, names sorted), if any. Like
 * Config Sync's walk it does not enter symlinked directories or `.git`; a directory it cannot list is
 * passed over here, and the source read reports it.
 */
export async function kustomizationBelow(dir: string): Promise<string | undefined> {
  let level = [""];
  while (level.length > 0) {
    const next: string[] = [];
    for (const relative of level) {
      const entries = await readdir(join(dir, relative), { withFileTypes: true }).catch(() => []);
      for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
        if (entry.isDirectory()) {
          if (entry.name !== ".git") next.push(path);
        } else if (relative !== "" && isKustomizationFileName(entry.name)) return path;
      }
    }
    level = next;
  }
  return undefined;
}

function isKustomizationFileName(name: string): boolean {
  return (kustomizationFileNames as readonly string[]).includes(name);
}

/**
 * A sync directory without a kustomization but with one below it (KNV1068): Config Sync refuses to read
 * it as plain manifests rather than apply the kustomizations' files as objects.
 */
export function kustomizationMissingError(dir: string, below: string): RenderingError {
  return new RenderingError(
    `Kustomization config file is missing from the sync directory ${dir}, but ${below} is below it: add a kustomization.yaml to the sync directory to render it, or remove the kustomizations below it to read the directory as plain manifests`,
  );
}

/** Output above this is refused rather than held in memory (a runaway generator). */
const maxOutputBytes = 256 * 1024 * 1024;

/**
 * Runs `kustomize build` on `dir` and writes its output to a new folder, returned; the caller removes it.
 * Without shell access, kustomize runs with a PATH that holds only helm's folder, so a remote git base
 * (kustomize clones with the git CLI) fails, and exec plugins are not enabled: Config Sync's
 * hydration-controller image without a shell refuses the same.
 */
export async function renderKustomization(dir: string, options: RenderOptions): Promise<string> {
  // Our own walk confines every path, so kustomize may follow paths across the repository, as in Config Sync.
  const walk = await checkKustomizationPaths(dir, {
    repositoryRoot: options.repositoryRoot,
    allowRemote: options.enableShell,
  });
  const kustomize = await locate("kustomize", options.tools);
  const helm = await locate("helm", options.tools);
  const args = ["build", "--enable-helm", `--helm-command=${helm}`, "--load-restrictor=LoadRestrictionsNone"];
  if (options.enableShell) args.push("--enable-alpha-plugins", "--enable-exec");
  const timeoutMs = options.timeoutMs ?? renderTimeoutMs;
  const deadline = performance.now() + timeoutMs;
  const home = await mkdtemp(join(tmpdir(), "driftless-render-"));
  // helm keeps its caches under HOME/XDG folders; a fresh one per render keeps renders independent.
  const env: NodeJS.ProcessEnv = {
    HOME: home,
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_DATA_HOME: join(home, "data"),
    // kustomize points HELM_DATA_HOME (helm's plugins) into helmGlobals.configHome, which may be in the
    // repository; helm then runs a downloader plugin's program for a chart URL. This empty folder wins.
    HELM_PLUGINS: join(home, "helm-plugins"),
    // Their own temporary files (kustomize's values files for helm, helm's downloads) go with the render's
    // folder, which a stop removes and the next start sweeps after a kill.
    TMPDIR: join(home, "tmp"),
    // helm is called by its full path; an empty PATH leaves kustomize no git (remote bases) and no shell.
    PATH: options.enableShell ? [dirname(helm), process.env["PATH"] ?? ""].join(delimiter) : home,
  };
  try {
    await mkdir(join(home, "helm-plugins"));
    await mkdir(join(home, "tmp"));
    // Config Sync asks kustomize for origin annotations before every build, and pulls charts in place (ours
    // or, with shell, kustomize's); all go into a mirror of the checkout, which only the fetch writes.
    const build = await buildDirectory(dir, options.repositoryRoot, home, walk.chartHomes).catch((error: unknown) => {
      throw mirrorFailure(error);
    });
    const remainingMs = (): number => Math.max(1, deadline - performance.now());
    // Charts kustomize would pull are pulled and checked first, where it reads them (chart-pulls.ts).
    const output = await pullCharts(walk.pulls, {
      helm,
      env,
      scratch: home,
      rootOf: build.rootOf,
      signal: options.signal,
      remainingMs,
      timeoutMs,
    })
      .then(() =>
        runTool(kustomize, [...args, "--", build.dir], {
          cwd: build.dir,
          env,
          signal: options.signal,
          timeoutMs: remainingMs(),
          maxStdoutBytes: maxOutputBytes,
        }).catch((error: unknown) => {
          throw renderFailure(error, kustomize, dir, timeoutMs, inCheckout(build));
        }),
      )
      .finally(async () => {
        if (build.mirrorRoot !== undefined) await rm(build.mirrorRoot, { recursive: true, force: true });
      });
    const out = join(home, "rendered");
    await mkdir(out, { recursive: true });
    await writeFile(join(out, "rendered.yaml"), output);
    await rm(join(home, "cache"), { recursive: true, force: true });
    await rm(join(home, "tmp"), { recursive: true, force: true });
    return out;
  } catch (error) {
    await rm(home, { recursive: true, force: true });
    throw error;
  }
}

/** A file the mirror could not read or write (EACCES, ENOSPC...) fails the render, named. */
function mirrorFailure(error: unknown): unknown {
  if (error instanceof RenderingError) return error;
  const { code, path } = error as NodeJS.ErrnoException;
  const at = path === undefined ? "" : ` at ${path}`;
  return new RenderingError(
    `preparing the build's mirror of the checkout failed${at}: ${code ?? String(error)}`,
    error,
    fileErrorClass(error),
  );
}

/** kustomize's messages name the checkout's paths, not the mirror's the build ran in. */
function inCheckout(build: BuildDirectory): (text: string) => string {
  const { mirrorRoot, repositoryRoot } = build;
  if (mirrorRoot === undefined || repositoryRoot === undefined) return (text) => text;
  return (text) => text.replaceAll(mirrorRoot, repositoryRoot);
}

function renderFailure(
  error: unknown,
  kustomize: string,
  dir: string,
  timeoutMs: number,
  show: (text: string) => string,
): unknown {
  if (!(error instanceof ToolProcessError)) return error;
  switch (error.exit) {
    case ToolExit.NotFound:
      return new RenderingError(
        `kustomize was not found at ${kustomize}: set --render-tools-dir (DRIFTLESS_RENDER_TOOLS_DIR) to the folder holding kustomize and helm`,
        error,
      );
    case ToolExit.TimedOut:
      // A slow or hung server (a chart repository, a remote resource) may answer next time.
      return new RenderingError(
        `kustomize build in ${dir} did not finish within ${Math.round(timeoutMs / 1000)}s and was stopped (a chart repository or remote resource that does not answer?)`,
        error,
        ErrorClass.Retry,
      );
    case ToolExit.TooMuchOutput:
      return new RenderingError(
        `kustomize build in ${dir} printed more than ${maxOutputBytes / 1024 / 1024} MiB and was stopped`,
        error,
      );
    case ToolExit.Aborted:
      return error;
    case ToolExit.Failed:
      return new RenderingError(
        `failed to run kustomize build in ${dir}, stdout: ${show(error.stdout.trim())}: ${show(error.stderr.trim()) || error.message}`,
        error,
      );
  }
}

/** The tool in the configured folder, or the first one on PATH; the bare name when none is found (ENOENT later). */
async function locate(name: string, tools: RenderTools): Promise<string> {
  const dirs = tools.dir === undefined ? (process.env["PATH"] ?? "").split(delimiter).filter(Boolean) : [tools.dir];
  for (const dir of dirs) {
    const path = join(dir, name);
    if (
      await access(path, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return path;
  }
  return tools.dir === undefined ? name : join(tools.dir, name);
}

/** Removes a folder renderKustomization returned (and its private HOME). */
export async function removeRendered(out: string): Promise<void> {
  await rm(dirname(out), { recursive: true, force: true });
}
