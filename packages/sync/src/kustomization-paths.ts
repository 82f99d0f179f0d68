/**
 * Before `kustomize build`, every file the kustomization tree names is checked to resolve inside the
 * repository checkout (symlinks followed), and URLs are refused without shell access. kustomize runs
 * with LoadRestrictionsNone, as in Config Sync, so that a kustomization may name files elsewhere in
 * its repository; this walk is what keeps it from naming /proc/1/environ or a ServiceAccount token.
 *
 * A walk before the build is sound: the checkout is the reconciler's own, written only by its git
 * fetch, so nothing can change between the walk and kustomize's reads (no TOCTOU). `helm pull` unpacks
 * remote charts under a chart home of the render's mirror of the checkout (origin-annotations.ts), never
 * the checkout: chart-pulls.ts before the build, or kustomize itself with shell, into the chart homes this
 * walk reports; helm unpacks every archive entry as a regular file, so a pull adds no way out.
 *
 * The fields are those of kustomize v5.8's types.Kustomization and of its builtin plugins' configs.
 * kustomize decodes both with Go's encoding/json, which matches keys case-insensitively: so does this.
 * It parses them with go-yaml, which reads some YAML otherwise than the JS library: the walk reads
 * every scalar as text and refuses the constructs the two read apart (`goYamlDifference`, line breaks
 * only go-yaml sees), and a plugin configuration's plain scalar kustomize reads as a number, a bool or
 * a time where the walk reads a path or name (`TypedScalar`).
 */
import { lstat, realpath, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { helmChartNameProblem, helmReleaseNameProblem } from "@driftless/api";
import type { ChartPull } from "./chart-pulls.ts";
import { checkChartSchemas } from "./chart-schemas.ts";
import { isRemoteTarget, PathConfinement } from "./confine-path.ts";
import {
  isTrue,
  MisreadValue,
  parseYaml,
  parseYamlText,
  pluginEntries,
  records,
  strings,
  type Json,
} from "./kustomization-yaml.ts";
import { pluginConfigs, pluginKind } from "./plugin-configs.ts";
import { RenderingError } from "./render-error.ts";

/** kustomize's names for a kustomization file. */
export const kustomizationFileNames = ["kustomization.yaml", "kustomization.yml", "Kustomization"] as const;

export interface KustomizationPathOptions {
  /** The checkout's root (not only the sync directory): files elsewhere in the repository may be named. */
  readonly repositoryRoot: string;
  /** spec.override.enableShellInRendering: URL resources and values files are allowed (and not walked). */
  readonly allowRemote: boolean;
}

/** What a build of the walked tree pulls, and where. */
export interface KustomizationWalk {
  /** The charts kustomize would pull, for chart-pulls.ts to pull and check first (none with shell access). */
  readonly pulls: readonly ChartPull[];
  /**
   * Every directory a chart pull may unpack into (chartPullHome, below the real directory of the naming
   * kustomization), driftless's own or, with shell access, kustomize's: the mirror makes them its own.
   */
  readonly chartHomes: readonly string[];
}

/**
 * The directory kustomize unpacks a pulled chart's folder into and reads it from: chartHome, or
 * chartHome/name-version with a version, joined to the kustomization's directory `root` as kustomize joins it.
 */
export function chartPullHome(
  pull: Pick<ChartPull, "dir" | "chartHome" | "name" | "version">,
  root: string = pull.dir,
): string {
  const home = resolve(root, pull.chartHome);
  return pull.version === "" ? home : join(home, `${pull.name}-${pull.version}`);
}

/**
 * Throws a RenderingError (KNV1068) naming the first file that leaves the repository or is a URL; returns
 * the charts a build pulls and the directories they go into.
 */
export async function checkKustomizationPaths(
  dir: string,
  options: KustomizationPathOptions,
): Promise<KustomizationWalk> {
  const confine = await PathConfinement.of(options.repositoryRoot);
  const real = await realpath(dir);
  if (!confine.contains(real))
    throw new RenderingError(`the sync directory ${dir} is not inside the repository checkout ${confine.root}`);
  try {
    const walk = new Walk(confine, options.allowRemote);
    await walk.kustomization(real);
    return { pulls: walk.pulls, chartHomes: [...walk.chartHomes] };
  } catch (error) {
    // A file the walk could not read (EACCES, ENAMETOOLONG...) fails the render too, named.
    if (error instanceof RenderingError) throw error;
    const path = (error as NodeJS.ErrnoException).path;
    const what = path === undefined ? "" : ` at ${confine.show(path).slice(0, 200)}`;
    throw new RenderingError(
      `checking the files the kustomization in ${confine.show(real)} names failed${what}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      error,
    );
  }
}

class Walk {
  readonly confine: PathConfinement;
  readonly #allowRemote: boolean;
  readonly #seen = new Set<string>();
  readonly pulls: ChartPull[] = [];
  readonly chartHomes = new Set<string>();

  constructor(confine: PathConfinement, allowRemote: boolean) {
    this.confine = confine;
    this.#allowRemote = allowRemote;
  }

  /** Checks the kustomization in the real directory `dir` and every one it names. */
  async kustomization(dir: string): Promise<void> {
    if (this.#seen.has(dir)) return;
    this.#seen.add(dir);
    for (const name of kustomizationFileNames) {
      const file = await this.confine.resolve(dir, name, `${this.confine.show(dir)}:`);
      if (file === undefined || !(await isFile(file))) continue;
      const where = this.confine.show(join(dir, name));
      for (const doc of await parseYaml(file, where))
        await this.fields(dir, doc, where).catch((error: unknown) => {
          // Nested kustomizations and plugin configurations name their own file; this one's fields are named here.
          if (error instanceof MisreadValue) throw new RenderingError(`${where}: ${error.message}`, error);
          throw error;
        });
    }
  }

  async fields(dir: string, k: Json, where: string): Promise<void> {
    // Files or kustomization directories (a directory is tried only after the file: kustomize's order).
    for (const field of ["resources", "bases", "components"])
      for (const entry of strings(k, field)) await this.target(dir, entry, `${where}: ${field} entry`);
    for (const field of ["crds", "configurations"])
      for (const entry of strings(k, field)) await this.file(dir, entry, `${where}: ${field} entry`);
    // Plugin configurations: inline YAML, files, or kustomizations building them.
    for (const field of ["generators", "transformers", "validators"])
      for (const entry of pluginEntries(k, field)) await this.pluginEntry(dir, entry, `${where}: ${field} entry`);
    for (const field of ["patches", "patchesJson6902", "replacements"])
      for (const item of records(k, field))
        for (const path of strings(item, "path")) await this.file(dir, path, `${where}: ${field}[].path`);
    // An entry is inline patch text when it parses as objects, else a path: every entry is checked as one.
    for (const entry of strings(k, "patchesStrategicMerge"))
      await this.file(dir, entry, `${where}: patchesStrategicMerge entry`);
    for (const field of ["configMapGenerator", "secretGenerator"])
      for (const args of records(k, field)) await this.generatorArgs(dir, args, `${where}: ${field}`);
    // Every key kustomize folds to openapi or path: given twice, the later one wins in kustomize, not the first.
    for (const openapi of records(k, "openapi"))
      for (const path of strings(openapi, "path")) await this.file(dir, path, `${where}: openapi.path`);
    await this.helm(dir, k, where);
  }

  /** A resource, base or component: a file, a kustomization directory, or (shell only) a remote target. */
  async target(dir: string, raw: string, where: string): Promise<void> {
    if (this.#remote(raw, where)) return;
    const real = await this.confine.resolve(dir, raw, where);
    if (real !== undefined && (await stat(real)).isDirectory()) await this.kustomization(real);
  }

  async file(dir: string, raw: string, where: string): Promise<void> {
    if (this.#remote(raw, where)) return;
    await this.confine.resolve(dir, raw, where);
  }

  /** True for a URL allowed with shell access; throws for one without. */
  #remote(raw: string, where: string): boolean {
    if (!isRemoteTarget(raw)) return false;
    if (this.#allowRemote) return true;
    throw new RenderingError(
      `${where} ${JSON.stringify(raw)} is a URL: kustomize would fetch it from the network; remote resources and files need spec.override.enableShellInRendering: true`,
    );
  }

  /** configMapGenerator/secretGenerator (and their builtin plugin form): `files` ([key=]path), `envs`, `env`. */
  async generatorArgs(dir: string, args: Json, where: string): Promise<void> {
    for (const source of strings(args, "files")) {
      // kustomize's ParseFileSource: `key=path` with one '=', else the whole entry is the path.
      const parts = source.split("=");
      await this.file(dir, parts.length === 2 ? (parts[1] ?? "") : source, `${where}[].files entry`);
    }
    for (const field of ["envs", "env"])
      for (const path of strings(args, field)) await this.file(dir, path, `${where}[].${field} entry`);
  }

  /**
   * A `generators`/`transformers`/`validators` entry. kustomize first reads it as inline YAML, and as a
   * path only when that fails; an entry this walk cannot read as either is refused, never skipped.
   */
  async pluginEntry(dir: string, entry: string, where: string): Promise<void> {
    const shown = JSON.stringify(entry.length > 80 ? `${entry.slice(0, 80)}…` : entry);
    const unreadable = (why: string): RenderingError =>
      new RenderingError(
        `${where} ${shown} is neither a file of the repository nor YAML driftless can read (${why}); kustomize could read it as inline plugin configuration: fix the YAML, or rename the file`,
      );
    const parsed = parseYamlText(entry, `${where} (inline)`, "plugin");
    if ("problem" in parsed) throw unreadable(parsed.problem.split("\n")[0] ?? "parse error");
    const { objects } = parsed;
    if (objects.length > 0) {
      for (const config of pluginConfigs(objects))
        await this.pluginConfigFrom(dir, config, `${where} (inline)`, undefined);
      // Were kustomize to take the text for a path after all, a file of that name is checked too.
      if (await lstat(resolve(dir, entry)).then(Boolean, () => false)) await this.pluginFile(dir, entry, where);
      return;
    }
    if (entry.includes("\n")) throw unreadable("several lines, yet no object");
    if (this.#remote(entry, where)) return;
    if ((await this.pluginFile(dir, entry, where)) === undefined)
      throw new RenderingError(`${where} ${shown} names no file of the repository, and is not inline YAML`);
  }

  /** The plugin configurations of the file or kustomization directory `entry` names, checked. */
  async pluginFile(dir: string, entry: string, where: string): Promise<string | undefined> {
    const real = await this.confine.resolve(dir, entry, where);
    if (real === undefined) return undefined;
    if (await isFile(real)) {
      const source = this.confine.show(real);
      for (const config of pluginConfigs(await parseYaml(real, source, "plugin")))
        await this.pluginConfigFrom(dir, config, where, source);
      return real;
    }
    // A kustomization that builds plugin configurations (patches, replacements...) could write any
    // path into them; only shell access, which runs the repository's own code anyway, allows it.
    if (!this.#allowRemote)
      throw new RenderingError(
        `${where} ${JSON.stringify(entry)} is a directory: driftless cannot check which files the plugin configurations a kustomization builds would read; name the configuration files themselves, or set spec.override.enableShellInRendering: true`,
      );
    await this.kustomization(real);
    return real;
  }

  /** A plugin configuration read from the file `source` (undefined: inline); a typed scalar it reads is refused naming it. */
  async pluginConfigFrom(dir: string, config: Json, where: string, source: string | undefined): Promise<void> {
    try {
      await this.pluginConfig(dir, config, where);
    } catch (error) {
      if (!(error instanceof MisreadValue)) throw error;
      const kind = typeof config["kind"] === "string" ? ` (${config["kind"]})` : "";
      throw new RenderingError(
        `${where}${kind}${source === undefined ? "" : ` in ${source}`}: ${error.message}`,
        error,
      );
    }
  }

  /**
   * A plugin configuration. A builtin's file fields are read relative to the naming kustomization; any
   * other plugin is code of the repository (exec, function or Go plugin), which only shell access runs.
   */
  async pluginConfig(dir: string, config: Json, where: string): Promise<void> {
    const plugin = pluginKind(config);
    if (plugin.is === "unknownBuiltin") throw new RenderingError(`${where}: ${plugin.why}`);
    if (plugin.is === "other") {
      if (this.#allowRemote) return;
      throw new RenderingError(
        `${where}: ${plugin.why}; other plugins run code of the repository and need spec.override.enableShellInRendering: true`,
      );
    }
    const at = `${where} (${String(config["kind"])})`;
    switch (plugin.reads) {
      case undefined:
        return;
      case "ConfigMapGenerator":
      case "SecretGenerator":
        return this.generatorArgs(dir, config, at);
      case "HelmChartInflationGenerator":
        return this.chart(dir, config, strings(config, "chartHome"), at, strings(config, "chartHome"));
      case "PatchTransformer":
      case "PatchJson6902Transformer":
        for (const path of strings(config, "path")) await this.file(dir, path, `${at} path`);
        return;
      case "PatchStrategicMergeTransformer":
        for (const path of strings(config, "paths")) await this.file(dir, path, `${at} paths entry`);
        return;
      case "ReplacementTransformer":
        for (const item of records(config, "replacements"))
          for (const path of strings(item, "path")) await this.file(dir, path, `${at} replacements[].path`);
        return;
      case "ValueAddTransformer":
        for (const path of strings(config, "targetFilePath")) await this.file(dir, path, `${at} targetFilePath`);
        return;
    }
  }

  /** helmCharts, the deprecated helmChartInflationGenerator, and helmGlobals. */
  async helm(dir: string, k: Json, where: string): Promise<void> {
    const globals = records(k, "helmGlobals");
    const legacy = records(k, "helmChartInflationGenerator");
    const chartHomes = [
      ...globals.flatMap((g) => strings(g, "chartHome")),
      ...legacy.flatMap((g) => strings(g, "chartHome")),
    ];
    const configHomes = [
      ...globals.flatMap((g) => strings(g, "configHome")),
      ...legacy.flatMap((g) => strings(g, "helmHome")),
    ];
    // The one chart home kustomize gives these charts: helmGlobals', else the deprecated generator's last.
    const pullHomes = (
      globals.length > 0
        ? globals.flatMap((g) => strings(g, "chartHome"))
        : legacy
            .flatMap((g) => strings(g, "chartHome"))
            .filter((home) => home !== "")
            .slice(-1)
    ).filter((home) => home !== "");
    for (const home of configHomes) await this.configHome(dir, home, `${where}: helmGlobals.configHome`);
    for (const chart of records(k, "helmCharts"))
      await this.chart(dir, chart, chartHomes, `${where}: helmCharts`, pullHomes);
    for (const old of legacy) {
      const chart = {
        name: strings(old, "chartName"),
        version: strings(old, "chartVersion"),
        repo: strings(old, "chartRepoUrl"),
        releaseName: strings(old, "releaseName"),
        valuesFile: strings(old, "values"),
      };
      await this.chart(dir, chart, chartHomes, `${where}: helmChartInflationGenerator`, pullHomes);
    }
  }

  /**
   * kustomize runs helm with HELM_CONFIG_HOME, HELM_CACHE_HOME and HELM_DATA_HOME below configHome: helm
   * would take its repositories, registry logins and plugins (programs it runs) from the repository.
   */
  async configHome(dir: string, home: string, where: string): Promise<void> {
    if (!this.#allowRemote)
      throw new RenderingError(
        `${where} ${JSON.stringify(home)} would have helm read its configuration and run its plugins from the repository; it needs spec.override.enableShellInRendering: true`,
      );
    await this.file(dir, home, where);
  }

  /**
   * One chart: kustomize passes releaseName and name to helm as positional arguments without `--`,
   * so both are validated here; the chart's directory (chartHome/[name-version/]name), which helm
   * reads whole, and its values files must be in the repository. `pullHomes`: the chart home kustomize
   * pulls into (none given: `charts`).
   */
  async chart(
    dir: string,
    chart: Json,
    chartHomes: readonly string[],
    where: string,
    pullHomes: readonly string[],
  ): Promise<void> {
    for (const name of strings(chart, "releaseName")) {
      const problem = helmReleaseNameProblem(name);
      if (problem !== undefined) throw new RenderingError(`${where} releaseName ${JSON.stringify(name)} ${problem}`);
    }
    const names = strings(chart, "name");
    for (const name of names) {
      const problem = helmChartNameProblem(name);
      if (problem !== undefined) throw new RenderingError(`${where} name ${JSON.stringify(name)} ${problem}`);
    }
    for (const repo of strings(chart, "repo"))
      if (!/^(https?|oci):\/\//i.test(repo))
        throw new RenderingError(
          `${where} repo ${JSON.stringify(repo)} must be an https://, http:// or oci:// chart repository`,
        );
    for (const path of strings(chart, "valuesFile")) await this.file(dir, path, `${where} valuesFile`);
    for (const path of strings(chart, "additionalValuesFiles"))
      await this.file(dir, path, `${where} additionalValuesFiles entry`);
    for (const home of strings(chart, "configHome")) await this.configHome(dir, home, `${where} configHome`);
    const versions = strings(chart, "repo").length > 0 ? strings(chart, "version") : [];
    // kustomize's default chartHome is `charts` beside the kustomization; it pulls charts into it.
    const homes = [...chartHomes, ...strings(chart, "chartHome")];
    for (const home of homes.length === 0 ? ["charts"] : homes) {
      await this.confine.resolve(dir, home, `${where} chartHome`);
      for (const name of names)
        for (const sub of [name, ...versions.map((v) => join(`${name}-${v}`, name))]) {
          const chartDir = await this.confine.resolve(dir, join(home, sub), `${where} chart directory`);
          if (chartDir === undefined || !(await stat(chartDir)).isDirectory()) continue;
          await this.confine.checkTreeBelow(chartDir, `${where} chart ${JSON.stringify(name)}`);
          // helm loads a schema's outside references itself (chart-schemas.ts).
          if (!this.#allowRemote)
            await checkChartSchemas(chartDir, `${where} chart ${JSON.stringify(name)}`, (p) => this.confine.show(p));
        }
    }
    // kustomize refuses a chart without a name itself, before any pull.
    if (strings(chart, "repo").length === 0 || !names.some((name) => name !== "")) return;
    if (this.#allowRemote) {
      // kustomize pulls it itself: every home it could pick is the mirror's, nothing more is refused.
      for (const home of possiblePullHomes(dir, chart, pullHomes)) this.chartHomes.add(home);
      return;
    }
    const pull = chartPull(dir, chart, pullHomes, where);
    this.pulls.push(pull);
    this.chartHomes.add(chartPullHome(pull));
  }
}

/** A chart kustomize would pull; a field given twice (keys differing in case) is refused: which one kustomize reads is unclear. */
function chartPull(dir: string, chart: Json, pullHomes: readonly string[], where: string): ChartPull {
  const one = (values: readonly string[], field: string): string => {
    const distinct = [...new Set(values)];
    if (distinct.length > 1)
      throw new RenderingError(
        `${where} ${field} is given more than once (${distinct.map((v) => JSON.stringify(v)).join(", ")}): driftless pulls the chart itself to check its schemas, and cannot tell which kustomize would read`,
      );
    return distinct[0] ?? "";
  };
  return {
    dir,
    chartHome: one(pullHomes, "chartHome") || "charts",
    name: one(strings(chart, "name"), "name"),
    repo: one(strings(chart, "repo"), "repo"),
    version: one(strings(chart, "version"), "version"),
    devel: isTrue(chart, "devel"),
    where,
  };
}

/** Every chart home kustomize may pull `chart` into, for each reading of a field given twice (keys differing in case). */
function possiblePullHomes(dir: string, chart: Json, pullHomes: readonly string[]): string[] {
  const homes = pullHomes.length === 0 ? ["charts"] : pullHomes.map((home) => home || "charts");
  const versions = strings(chart, "version");
  return homes.flatMap((chartHome) =>
    strings(chart, "name")
      .filter((name) => name !== "")
      .flatMap((name) =>
        (versions.length === 0 ? [""] : versions).map((version) => chartPullHome({ dir, chartHome, name, version })),
      ),
  );
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path)).isFile();
}
