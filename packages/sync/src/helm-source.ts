/**
 * A sync's source rendered from a Helm chart with the real `helm` (Config Sync's helm-sync): the chart
 * version, resolved from a range by `helm show chart`, is the commit; `helm pull` downloads the archive,
 * whose schemas are checked (chart-schemas.ts), and `helm template --output-dir` renders it into the tree
 * the pass reads. A render is redone only when its inputs change.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { DriftlessError, ErrorClass, KnvCode, redactUrl, type HelmRootSyncSpec } from "@driftless/api";
import type { FetchResult } from "@driftless/git";
import type { ArtifactCredentials } from "./artifact-credentials.ts";
import { checkChartSchemas } from "./chart-schemas.ts";
import {
  chartReference,
  helmRepositoryName,
  isOciRepository,
  pullArgs,
  registryLoginArgs,
  repositoriesYaml,
  repoUpdateArgs,
  showChartArgs,
  templateArgs,
} from "./helm-args.ts";
import { setDeployNamespace } from "./helm-deploy-namespace.ts";
import { helmFailureClass } from "./helm-failure-class.ts";
import { RenderingError } from "./render-error.ts";
import { runTool, ToolExit, ToolProcessError } from "./run-tool.ts";

export interface HelmFetchOptions {
  readonly spec: HelmRootSyncSpec;
  /** Release namespace: spec.helm.namespace or `default` for a RootSync, the RepoSync's namespace. */
  readonly releaseNamespace: string;
  readonly credentials: ArtifactCredentials;
  /** Contents of spec.helm.valuesFileRefs, in order (later ones win). */
  readonly valuesFiles: readonly string[];
  /** spec.override.enableShellInRendering, where honoured: the chart's schemas are left to helm, as a repository's are. */
  readonly enableShell?: boolean;
  readonly signal: AbortSignal;
}

/** helm failed to find, fetch or render the chart (KNV2004: Config Sync reports helm-sync's errors as source errors). */
export class HelmSourceError extends DriftlessError {
  constructor(message: string, errorClass: ErrorClass, cause?: unknown) {
    super({ code: KnvCode.SourceFetch, errorClass, message, cause });
  }
}

const semverNumber = String.raw`(?:0|[1-9]\d*)`;
const prereleasePart = String.raw`(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)`;
const buildPart = "[0-9A-Za-z-]+";
/**
 * A version helm is given as written, and is the commit: Config Sync's isRange, which asks Go's
 * `semver.IsValid("v" + version)`. So `1.2` and `1` (short for 1.2.0 and 1.0.0) are exact too (helm reads them as
 * 1.2.x and 1.x); `v1.2.3` is no semver but a constraint, resolved by `helm show chart`, so a chart pushed as
 * `v1.2.3` is found under that OCI tag and the commit is its own version.
 */
const exactVersion = new RegExp(
  `^${semverNumber}(?:\\.${semverNumber}(?:\\.${semverNumber}(?:-${prereleasePart}(?:\\.${prereleasePart})*)?(?:\\+${buildPart}(?:\\.${buildPart})*)?)?)?$`,
);

/** Whether Config Sync gives `version` to helm as written rather than resolving it (exported for tests). */
export function isExactVersion(version: string | undefined): version is string {
  return version !== undefined && exactVersion.test(version);
}

const maxOutputBytes = 64 * 1024 * 1024;

/**
 * helm's words for the sync's named repository, as helm words them for `--repo <url>`, as Config Sync's helm-sync
 * runs it: a chart or version it lacks (`chart "web" matching 9.9.9 not found in driftless index. (try 'helm repo
 * update'): …`) is `chart "web" version "9.9.9" not found in <url> repository`; an index `helm repo update` could not
 * get (`…Unable to get an update from the "driftless" chart repository (<url>): <why>: Error: Failed to update the
 * following repositories: [<url>]`) is `Error: looks like "<url>" is not a valid chart repository or cannot be
 * reached: <why>`. `output` has its lines joined by spaces.
 */
export function asRepoUrlWords(output: string, repoUrl: string): string {
  const named = new RegExp(
    `chart "([^"]*)" matching (.*?) ?not found in ${helmRepositoryName} index\\. \\(try 'helm repo update'\\)(?:: no chart (?:name|version) found(?: for \\S*)?)?`,
    "g",
  );
  const unreachable = new RegExp(
    `^Hang tight while we grab the latest from your chart repositories\\.\\.\\. \\.\\.\\.Unable to get an update from the "${helmRepositoryName}" chart repository \\([^)]*\\): (.*?): Error: Failed to update the following repositories: \\[[^\\]]*\\]$`,
  );
  return output
    .replace(
      named,
      (_, chart: string, version: string) =>
        `chart ${JSON.stringify(chart)}${version === "" ? "" : ` version ${JSON.stringify(version)}`} not found in ${repoUrl} repository`,
    )
    .replace(
      unreachable,
      (_, why: string) =>
        `Error: looks like ${JSON.stringify(repoUrl)} is not a valid chart repository or cannot be reached: ${why}`,
    );
}

/** One helm command (an index download, a chart pull and render) that takes longer is killed. */
export const helmTimeoutMs = 5 * 60_000;

interface Last {
  readonly key: string;
  readonly result: FetchResult;
}

export class HelmSource {
  readonly #cacheDir: string;
  readonly #helm: string;
  #last: Last | undefined;

  readonly #timeoutMs: number;

  /**
   * `cacheDir`: this sync's own folder; `toolsDir`: the folder holding helm, or undefined for PATH;
   * `timeoutMs`: the deadline of each helm command.
   */
  constructor(cacheDir: string, toolsDir: string | undefined, timeoutMs: number = helmTimeoutMs) {
    this.#cacheDir = cacheDir;
    this.#helm = toolsDir === undefined ? "helm" : join(toolsDir, "helm");
    this.#timeoutMs = timeoutMs;
  }

  async fetch(options: HelmFetchOptions): Promise<FetchResult> {
    const { spec } = options;
    const home = join(this.#cacheDir, "home");
    await mkdir(home, { recursive: true });
    const caFile = options.credentials.caCert === undefined ? undefined : join(this.#cacheDir, "ca.pem");
    if (caFile !== undefined) await writeFile(caFile, options.credentials.caCert ?? "", { mode: 0o600 });
    const run = (args: readonly string[], stdin?: string): Promise<string> => this.#run(args, home, options, stdin);
    const isOci = isOciRepository(spec.repo);
    const basic = options.credentials.basic;
    const reference = chartReference(spec);
    const withCa = (args: string[]): string[] =>
      caFile === undefined
        ? args
        : [...args.slice(0, args.indexOf("--")), `--ca-file=${caFile}`, ...args.slice(args.indexOf("--"))];
    // The repository's index (with its credentials, from the 0600 repositories.yaml) or, for oci://, a
    // registry login (password through stdin): once per fetch that asks the repository anything.
    let ready = false;
    const prepare = async (): Promise<void> => {
      if (ready) return;
      if (!isOci) {
        const config = join(home, "config", "helm");
        await mkdir(config, { recursive: true });
        await writeFile(join(config, "repositories.yaml"), repositoriesYaml(spec.repo, basic, caFile), { mode: 0o600 });
        await run(repoUpdateArgs());
      } else if (basic !== undefined) {
        const host = new URL(spec.repo.replace(/^oci:/, "https:")).host;
        await run(withCa(registryLoginArgs(host, basic.username)), basic.password);
      }
      ready = true;
    };

    if (!isExactVersion(spec.version)) await prepare();
    const version = await this.#version(spec, reference, (args) => run(withCa(args)));
    const values = [...options.valuesFiles, ...(spec.values === undefined ? [] : [JSON.stringify(spec.values)])];
    const key = createHash("sha256")
      .update(
        JSON.stringify([
          reference,
          spec.repo,
          // New credentials render again (a wrong password must be reported); only their digest is kept.
          createHash("sha256")
            .update(JSON.stringify([basic ?? null, options.credentials.caCert ?? null]))
            .digest("hex"),
          version,
          spec.releaseName,
          options.releaseNamespace,
          spec.deployNamespace,
          spec.includeCRDs,
          values,
          options.enableShell === true,
        ]),
      )
      .digest("hex");
    if (this.#last?.key === key) return { ...this.#last.result, fetched: false };
    await prepare();

    const dir = join(this.#cacheDir, "rendered", key.slice(0, 16));
    const scratch = `${dir}.partial`;
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    try {
      const valuesFiles: string[] = [];
      for (const [i, content] of values.entries()) {
        const file = join(scratch, `..values-${i}.yaml`);
        await writeFile(file, content, { mode: 0o600 });
        valuesFiles.push(file);
      }
      // helm loads whatever a schema refers to while it validates the values: the archive is checked first.
      const pulled = join(scratch, "chart");
      await mkdir(pulled);
      await run(withCa(pullArgs(reference, version, pulled)));
      const archive = await this.#checkedArchive(
        pulled,
        `chart ${spec.chart} ${version}`,
        options.enableShell === true,
      );
      const out = join(scratch, "out");
      await run(
        templateArgs({
          reference: archive,
          releaseName: spec.releaseName,
          version,
          namespace: options.releaseNamespace,
          includeCRDs: spec.includeCRDs === true,
          valuesFiles,
          outputDir: out,
        }),
      );
      // A chart that renders nothing still gets its directory, as in Config Sync.
      await mkdir(join(out, spec.chart), { recursive: true });
      if (spec.deployNamespace !== undefined) await setDeployNamespace(join(out, spec.chart), spec.deployNamespace);
      await rm(dir, { recursive: true, force: true });
      await rename(scratch, dir);
    } catch (error) {
      await rm(scratch, { recursive: true, force: true });
      throw error;
    }
    await this.#removeOthers(dir);
    const result: FetchResult = { commit: version, dir, sourceDir: join(dir, "out", spec.chart), fetched: true };
    this.#last = { key, result };
    return result;
  }

  /** An exact version is used as written; a range (or none: the latest) is resolved by the repository. */
  async #version(spec: HelmRootSyncSpec, reference: string, run: (args: string[]) => Promise<string>): Promise<string> {
    if (isExactVersion(spec.version)) return spec.version;
    const shown = await run(showChartArgs(reference, spec.version));
    const found = /^version:\s*["']?([^"'\s]+)["']?\s*$/m.exec(shown)?.[1];
    if (found === undefined)
      throw new HelmSourceError(
        `helm show chart printed no version for chart ${spec.chart} in ${redactUrl(spec.repo)}`,
        ErrorClass.Terminal,
      );
    return found;
  }

  /** The one archive `helm pull` wrote into `dir`, its schemas checked unless shell is allowed (KNV2004, as helm's own errors). */
  async #checkedArchive(dir: string, chart: string, enableShell: boolean): Promise<string> {
    const archives = (await readdir(dir)).filter((name) => name.endsWith(".tgz"));
    if (archives.length !== 1 || archives[0] === undefined)
      throw new HelmSourceError(`helm pull wrote ${archives.length} chart archives for ${chart}`, ErrorClass.Terminal);
    if (!enableShell)
      await checkChartSchemas(dir, chart, (path) => relative(dir, path)).catch((error: unknown) => {
        throw error instanceof RenderingError ? new HelmSourceError(error.message, ErrorClass.Terminal, error) : error;
      });
    return join(dir, archives[0]);
  }

  async #removeOthers(keep: string): Promise<void> {
    const root = join(this.#cacheDir, "rendered");
    for (const name of await readdir(root).catch(() => []))
      if (join(root, name) !== keep) await rm(join(root, name), { recursive: true, force: true });
  }

  #run(args: readonly string[], home: string, options: HelmFetchOptions, stdin?: string): Promise<string> {
    // A private HOME per sync: helm's repository config and cache, registry logins never mix between syncs.
    const env: NodeJS.ProcessEnv = {
      HOME: home,
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_DATA_HOME: join(home, "data"),
      PATH: home,
    };
    const secret = options.credentials.basic?.password;
    const redact = (text: string): string =>
      secret === undefined || secret === "" ? text : text.split(secret).join("***");
    const command =
      args[0] === "registry" || args[0] === "repo" || args[0] === "show" ? args.slice(0, 2).join(" ") : args[0];
    const about = `for chart ${options.spec.chart} from ${redactUrl(options.spec.repo)}`;
    return runTool(this.#helm, args, {
      env,
      signal: options.signal,
      timeoutMs: this.#timeoutMs,
      input: stdin,
      maxStdoutBytes: maxOutputBytes,
    }).catch((error: unknown) => {
      if (!(error instanceof ToolProcessError)) throw error;
      switch (error.exit) {
        case ToolExit.Aborted:
          throw error;
        case ToolExit.NotFound:
          throw new HelmSourceError(
            `helm was not found at ${this.#helm}: set --render-tools-dir (DRIFTLESS_RENDER_TOOLS_DIR) to the folder holding helm`,
            ErrorClass.Terminal,
            error,
          );
        case ToolExit.TimedOut:
          throw new HelmSourceError(
            `helm ${command} ${about} did not finish within ${Math.round(this.#timeoutMs / 1000)}s and was stopped (a repository that does not answer?)`,
            ErrorClass.Retry,
            error,
          );
        case ToolExit.TooMuchOutput:
          throw new HelmSourceError(
            `helm ${command} ${about} printed more than ${maxOutputBytes / 1024 / 1024} MiB and was stopped`,
            ErrorClass.Terminal,
            error,
          );
        case ToolExit.Failed: {
          // `helm repo update` prints why a repository failed (a 401, a TLS error) on stdout.
          const said = [error.stdout.trim().slice(-4096), error.stderr.trim()].filter((text) => text !== "");
          const output = asRepoUrlWords(
            redact(said.join(": ") || error.message).replace(/\s*\n\s*/g, " "),
            redactUrl(options.spec.repo),
          );
          throw new HelmSourceError(`helm ${command} failed ${about}: ${output}`, helmFailureClass(output), error);
        }
      }
    });
  }
}
