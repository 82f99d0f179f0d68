/**
 * A sync's source rendered from a Helm chart with the real `helm` (Config Sync's helm-sync): the chart
 * version, resolved from a range by `helm show chart`, is the commit, and `helm template --output-dir`
 * writes the tree the pass reads. A render is redone only when its inputs change.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DriftlessError, ErrorClass, KnvCode, redactUrl, type HelmRootSyncSpec } from "@driftless/api";
import type { FetchResult } from "@driftless/git";
import type { ArtifactCredentials } from "./artifact-credentials.ts";
import { setDeployNamespace } from "./helm-deploy-namespace.ts";

export interface HelmFetchOptions {
  readonly spec: HelmRootSyncSpec;
  /** Release namespace: spec.helm.namespace or `default` for a RootSync, the RepoSync's namespace. */
  readonly releaseNamespace: string;
  readonly credentials: ArtifactCredentials;
  /** Contents of spec.helm.valuesFileRefs, in order (later ones win). */
  readonly valuesFiles: readonly string[];
  readonly signal: AbortSignal;
}

/** helm failed to find, fetch or render the chart (KNV2004: Config Sync reports helm-sync's errors as source errors). */
export class HelmSourceError extends DriftlessError {
  constructor(message: string, errorClass: ErrorClass, cause?: unknown) {
    super({ code: KnvCode.SourceFetch, errorClass, message, cause });
  }
}

const exactVersion = /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
/** helm's messages for what passes by itself: everything else needs a change to the spec, Secret or repository. */
const transient =
  /connection refused|connection reset|no such host|network is unreachable|no route to host|i\/o timeout|timeout awaiting|Client\.Timeout exceeded|context deadline exceeded|TLS handshake timeout|unexpected EOF|500 Internal Server Error|502 Bad Gateway|503 Service Unavailable|504 Gateway Timeout|429 Too Many Requests/i;

/** How a helm failure is classified from what it printed (network failures retry, as git's do). */
export function helmFailureClass(output: string): ErrorClass {
  return transient.test(output) ? ErrorClass.Retry : ErrorClass.Terminal;
}
const maxOutputBytes = 64 * 1024 * 1024;

interface Last {
  readonly key: string;
  readonly result: FetchResult;
}

export class HelmSource {
  readonly #cacheDir: string;
  readonly #helm: string;
  #last: Last | undefined;

  /** `cacheDir`: this sync's own folder; `toolsDir`: the folder holding helm, or undefined for PATH. */
  constructor(cacheDir: string, toolsDir: string | undefined) {
    this.#cacheDir = cacheDir;
    this.#helm = toolsDir === undefined ? "helm" : join(toolsDir, "helm");
  }

  async fetch(options: HelmFetchOptions): Promise<FetchResult> {
    const { spec } = options;
    const home = join(this.#cacheDir, "home");
    await mkdir(home, { recursive: true });
    const caFile = options.credentials.caCert === undefined ? undefined : join(this.#cacheDir, "ca.pem");
    if (caFile !== undefined) await writeFile(caFile, options.credentials.caCert ?? "", { mode: 0o600 });
    const run = (args: readonly string[], stdin?: string): Promise<string> =>
      this.#run([...args, ...(caFile === undefined ? [] : ["--ca-file", caFile])], home, options, stdin);
    const isOci = spec.repo.startsWith("oci://");
    const basic = options.credentials.basic;
    const source = isOci
      ? [`${spec.repo.replace(/\/+$/, "")}/${spec.chart}`]
      : [
          spec.chart,
          "--repo",
          spec.repo,
          ...(basic === undefined ? [] : ["--username", basic.username, "--password", basic.password]),
        ];
    // oci:// credentials go to helm's registry login (through stdin), once per render or version lookup.
    let loggedIn = !isOci || basic === undefined;
    const login = async (): Promise<void> => {
      if (loggedIn || basic === undefined) return;
      const host = new URL(spec.repo.replace(/^oci:/, "https:")).host;
      await run(["registry", "login", host, "--username", basic.username, "--password-stdin"], basic.password);
      loggedIn = true;
    };

    const exact = spec.version !== undefined && exactVersion.test(spec.version);
    if (!exact) await login();
    const version = await this.#version(spec, source, run);
    const values = [...options.valuesFiles, ...(spec.values === undefined ? [] : [JSON.stringify(spec.values)])];
    const key = createHash("sha256")
      .update(
        JSON.stringify([
          source,
          version,
          spec.releaseName,
          options.releaseNamespace,
          spec.deployNamespace,
          spec.includeCRDs,
          values,
        ]),
      )
      .digest("hex");
    if (this.#last?.key === key) return { ...this.#last.result, fetched: false };
    await login();

    const dir = join(this.#cacheDir, "rendered", key.slice(0, 16));
    const scratch = `${dir}.partial`;
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    try {
      const valueArgs: string[] = [];
      for (const [i, content] of values.entries()) {
        const file = join(scratch, `..values-${i}.yaml`);
        await writeFile(file, content, { mode: 0o600 });
        valueArgs.push("--values", file);
      }
      const out = join(scratch, "out");
      await run([
        "template",
        ...(spec.releaseName === undefined ? [] : [spec.releaseName]),
        ...source,
        "--version",
        version,
        "--namespace",
        options.releaseNamespace,
        ...(spec.includeCRDs === true ? ["--include-crds"] : []),
        ...valueArgs,
        "--output-dir",
        out,
      ]);
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
  async #version(
    spec: HelmRootSyncSpec,
    source: readonly string[],
    run: (args: readonly string[]) => Promise<string>,
  ): Promise<string> {
    if (spec.version !== undefined && exactVersion.test(spec.version)) return spec.version.replace(/^v(?=\d)/, "");
    const shown = await run([
      "show",
      "chart",
      ...source,
      ...(spec.version === undefined ? [] : ["--version", spec.version]),
    ]);
    const found = /^version:\s*["']?([^"'\s]+)["']?\s*$/m.exec(shown)?.[1];
    if (found === undefined)
      throw new HelmSourceError(
        `helm show chart printed no version for chart ${spec.chart} in ${redactUrl(spec.repo)}`,
        ErrorClass.Terminal,
      );
    return found;
  }

  async #removeOthers(keep: string): Promise<void> {
    const root = join(this.#cacheDir, "rendered");
    for (const name of await readdir(root).catch(() => []))
      if (join(root, name) !== keep) await rm(join(root, name), { recursive: true, force: true });
  }

  #run(args: readonly string[], home: string, options: HelmFetchOptions, stdin?: string): Promise<string> {
    // A private HOME per sync: helm's repository cache, registry logins and config never mix between syncs.
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
    return new Promise((resolve, reject) => {
      const child = execFile(
        this.#helm,
        args,
        { env, signal: options.signal, maxBuffer: maxOutputBytes, encoding: "utf8" },
        (error, stdout, stderr) => {
          if (error === null) return resolve(stdout);
          const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
          const output = redact(`${stderr}`.trim() || error.message);
          reject(
            new HelmSourceError(
              missing
                ? `helm was not found at ${this.#helm}: set --render-tools-dir (DRIFTLESS_RENDER_TOOLS_DIR) to the folder holding helm`
                : `helm ${args[0] === "registry" ? "registry login" : args[0]} failed for chart ${options.spec.chart} from ${redactUrl(options.spec.repo)}: ${output}`,
              missing ? ErrorClass.Terminal : helmFailureClass(output),
              error,
            ),
          );
        },
      );
      child.stdin?.end(stdin ?? "");
    });
  }
}
