/**
 * Without shell access, driftless pulls the charts a kustomization names with `repo` itself, before
 * `kustomize build`, and checks their schemas (chart-schemas.ts): kustomize would otherwise pull and
 * template them in one step, and helm would load whatever their values.schema.json refers to. Each chart
 * goes where kustomize looks for it (chartHome[/name-version]/name, below the kustomization's real
 * directory), so kustomize finds it and never pulls a chart itself; the pull is kustomize's own command.
 * That directory is the render's mirror of it (origin-annotations.ts): the checkout is never written.
 */
import { cp, mkdir, mkdtemp, readdir, realpath, rm, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { ErrorClass, redactUrl } from "@driftless/api";
import { checkChartSchemas } from "./chart-schemas.ts";
import { helmFailureClass } from "./helm-failure-class.ts";
import { chartPullHome } from "./kustomization-paths.ts";
import { isInside, nearestRealPath } from "./origin-annotations.ts";
import { fileErrorClass, RenderingError } from "./render-error.ts";
import { runTool, ToolExit, ToolProcessError } from "./run-tool.ts";

/** A chart kustomize would pull: one entry of helmCharts, the deprecated generator or a plugin configuration. */
export interface ChartPull {
  /** The real directory of the kustomization naming it: kustomize's loader root, chartHome is relative to it. */
  readonly dir: string;
  readonly chartHome: string;
  readonly name: string;
  readonly repo: string;
  /** "" for the latest (kustomize then looks in chartHome/name, not chartHome/name-version/name). */
  readonly version: string;
  readonly devel: boolean;
  readonly where: string;
}

export interface ChartPullOptions {
  readonly helm: string;
  readonly env: NodeJS.ProcessEnv;
  /** A scratch folder of the render; each pull unpacks below it first, and every chart lands below it. */
  readonly scratch: string;
  /** kustomize's loader root for a kustomization the walk found at `dir`: its counterpart in the render's mirror. */
  readonly rootOf: (dir: string) => string;
  readonly signal: AbortSignal;
  /** What is left of the render's deadline, in ms. */
  readonly remainingMs: () => number;
  /** The render's whole deadline, for messages. */
  readonly timeoutMs: number;
}

/** Pulls each chart kustomize would pull, unpacked where kustomize reads it once its schemas are checked. */
export async function pullCharts(pulls: readonly ChartPull[], options: ChartPullOptions): Promise<void> {
  for (const pull of pulls) {
    const root = options.rootOf(pull.dir);
    const chartHome = chartPullHome(pull, root);
    const target = join(chartHome, pull.name);
    // kustomize pulls only when the chart is not there (a chart of the repository the walk checked, or pulled before).
    if (
      await stat(target).then(
        (s) => s.isDirectory(),
        () => false,
      )
    )
      continue;
    const staging = await mkdtemp(join(options.scratch, "chart-pull-"));
    try {
      await runTool(options.helm, pullArgs(pull, staging), {
        cwd: options.scratch,
        env: options.env,
        signal: options.signal,
        timeoutMs: Math.max(1, options.remainingMs()),
        maxStdoutBytes: 1024 * 1024,
      }).catch((error: unknown) => {
        throw pullFailure(error, pull, options);
      });
      // helm unpacks into the name its Chart.yaml gives; kustomize would read `name` only, and then fail.
      const unpacked = await readdir(staging);
      if (unpacked.length !== 1 || unpacked[0] !== pull.name)
        throw new RenderingError(
          `${pull.where}: the chart pulled for ${JSON.stringify(pull.name)} from ${redactUrl(pull.repo)} is named ${JSON.stringify(unpacked.filter((n) => n !== pull.name))} in its Chart.yaml`,
        );
      // Named as the file kustomize would read, below the kustomization.
      await checkChartSchemas(join(staging, pull.name), `${pull.where} chart ${JSON.stringify(pull.name)}`, (path) =>
        join(relative(root, chartHome), relative(staging, path)),
      );
      await placeChart(join(staging, pull.name), chartHome, pull, { root, scratch: options.scratch });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
}

/** Copies a checked chart into `chartHome`, which must lead into the render's scratch folder, not the checkout. */
async function placeChart(
  from: string,
  chartHome: string,
  pull: ChartPull,
  { root, scratch }: { root: string; scratch: string },
): Promise<void> {
  const shown = relative(root, chartHome);
  const what = `${pull.where}: the chart pulled for ${JSON.stringify(pull.name)}`;
  // The mirror makes chartHome a real directory of its own; only a chartHome that is a file of the checkout is not.
  if (!isInside(await realpath(scratch), await nearestRealPath(chartHome)))
    throw new RenderingError(
      `${what} cannot be unpacked into ${shown}: it is not a directory of the repository (a render never writes into the checkout)`,
    );
  try {
    await mkdir(chartHome, { recursive: true });
    // helm writes every entry as a regular file, so the copy holds no symlink.
    await cp(from, join(chartHome, pull.name), { recursive: true, errorOnExist: true, force: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new RenderingError(`${what} could not be unpacked into ${shown}: ${code}`, error, fileErrorClass(error));
  }
}

/** kustomize's `helm pull` (pullCommand), with the spec's values as `--flag=value` and the chart after `--`. */
function pullArgs(pull: ChartPull, untarDir: string): string[] {
  const oci = pull.repo.startsWith("oci://");
  return [
    "pull",
    "--untar",
    `--untardir=${untarDir}`,
    ...(oci ? [] : [`--repo=${pull.repo}`]),
    ...(pull.version === "" ? [] : [`--version=${pull.version}`]),
    ...(pull.devel ? ["--devel"] : []),
    "--",
    oci ? `${pull.repo.replace(/\/$/, "")}/${pull.name}` : pull.name,
  ];
}

function pullFailure(error: unknown, pull: ChartPull, { helm, timeoutMs }: ChartPullOptions): unknown {
  if (!(error instanceof ToolProcessError)) return error;
  const what = `helm pull of chart ${JSON.stringify(pull.name)} from ${redactUrl(pull.repo)}`;
  switch (error.exit) {
    case ToolExit.Aborted:
      return error;
    case ToolExit.TimedOut:
      return new RenderingError(
        `${pull.where}: ${what} did not finish within ${Math.round(timeoutMs / 1000)}s and was stopped (a chart repository that does not answer?)`,
        error,
        ErrorClass.Retry,
      );
    case ToolExit.NotFound:
      return new RenderingError(
        `helm was not found at ${helm}: set --render-tools-dir (DRIFTLESS_RENDER_TOOLS_DIR) to the folder holding kustomize and helm`,
        error,
      );
    case ToolExit.TooMuchOutput:
    case ToolExit.Failed: {
      const said = error.stderr.trim() || error.message;
      // A repository down or refusing (503, connection refused) passes by itself, as for a spec.helm source.
      const errorClass = error.exit === ToolExit.Failed ? helmFailureClass(said) : ErrorClass.Terminal;
      return new RenderingError(`${pull.where}: ${what} failed: ${said}`, error, errorClass);
    }
  }
}
