import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SourceFormat } from "@driftless/api";
import {
  clustersToCheck,
  declareForClusters,
  flatHydratedObject,
  hydratedObject,
  hydratedPaths,
  mergeClusterErrors,
  readManifests,
  sourceFormatFor,
  toYamlStream,
  UnnamedClusterName,
  withSpecialNamespacesDetached,
  type DeclaredObject,
  type JsonObject,
  type SyncScope,
} from "@driftless/source";
import { printableJson, printableLine, printableYaml } from "../terminal-text.ts";
import { kindsOrReport } from "./api-resources.ts";
import { printClusterErrors } from "./vet.ts";

export interface HydrateOptions {
  readonly dir: string;
  readonly format: SourceFormat;
  /** Whose objects (vet --namespace keeps a RepoSync's); default a RootSync's. */
  readonly scope?: SyncScope;
  /** One file per object, as `nomos hydrate --output DIR` lays them out. */
  readonly output?: string;
  /** Every object in one file. */
  readonly flat?: string;
  /** How objects are written (`--format`, as nomos): a YAML stream, or a JSON `List` per file. Default yaml. */
  readonly outputFormat?: OutputFormat;
  /**
   * The clusters to hydrate for (`--clusters`, as nomos: only those the source declares, so an unknown name
   * writes nothing): their cluster selectors are evaluated against each name. Undefined: every cluster the
   * source names, and `defaultcluster` (a cluster with no name).
   */
  readonly clusters?: readonly string[];
  /** The source's errors were printed already (by vet, for --keep-output): print them no more. */
  readonly errorsReported?: boolean;
}

export const OutputFormat = { Yaml: "yaml", Json: "json" } as const;
export type OutputFormat = (typeof OutputFormat)[keyof typeof OutputFormat];

/** The folder of the cluster without a name, as nomos names it. */
export const DefaultClusterFolder = UnnamedClusterName;

/**
 * `driftless hydrate DIR`: the objects a RootSync would apply from this source, after hierarchy
 * inheritance, without a cluster (built-in kinds and those api-resources.txt lists are known, other kinds are placed by where they are,
 * as `nomos hydrate --no-api-server-check` does). Implicit Namespaces are decided against the cluster
 * by the reconciler and are not printed. Cluster selectors are evaluated for each cluster the source
 * names and for a cluster without a name (`defaultcluster`), or for `--clusters`: with --output, several
 * clusters get a folder each, as `nomos hydrate` lays them out. Exit 1 with the errors (on `err`, so
 * they never mix with objects written to stdout) when the source is invalid.
 */
export async function hydrate(
  options: HydrateOptions,
  out: (line: string) => void,
  err: (line: string) => void = out,
): Promise<number> {
  const scope = options.scope ?? ({ kind: "RootSync" } as const);
  // vet --keep-output: vet has printed the source's errors; they are not printed twice.
  const reportSource = options.errorsReported === true ? () => undefined : err;
  const kinds = await kindsOrReport(options.dir, reportSource);
  if (kinds === undefined) return 1;
  const readOptions = {
    scope,
    kinds,
    format: sourceFormatFor(scope, options.format),
    allowUnknownKinds: true,
  };
  // Read once; each cluster only declares the objects again with its own selectors.
  const set = await readManifests(options.dir, readOptions);
  const clusters = clustersToCheck(set, options.clusters);
  // A cluster name becomes a folder: one from the source (a selector annotation) must not lead out of --output.
  const unsafe = clusters.find((name) => name !== undefined && !isSafeFolderName(name));
  if (unsafe !== undefined) {
    err(`cluster name ${JSON.stringify(unsafe)} cannot be a folder name (it holds a path separator or is . or ..)`);
    return 1;
  }
  const results = await declareForClusters(set, readOptions, clusters);
  const failed = results.some(({ result }) => !result.complete);
  if (failed) printClusterErrors(mergeClusterErrors(results), reportSource);
  // As nomos, the clusters that passed are still written to --output or --flat (exit 1); stdout gets nothing,
  // so a pipe never takes part of the objects for all of them. With none passed, --output gets no folder and
  // --flat an empty stream (an empty List with --format json), as nomos writes them.
  const passed = results.filter(({ result }) => result.complete);
  if (failed && options.flat === undefined && (options.output === undefined || passed.length === 0)) return 1;
  // Kind, group, namespace and name become file and folder names: none may lead out of --output.
  const unnamable =
    options.output === undefined
      ? undefined
      : results
          .flatMap(({ result }) => (result.complete ? result.objects : []))
          .find((o) => unsafePart(o) !== undefined);
  if (unnamable !== undefined) {
    err(
      `${printableLine(unnamable.sourcePath)}: ${printableLine(unsafePart(unnamable) ?? "")} cannot be part of a file name in --output (it holds a path separator or is . or ..)`,
    );
    return 1;
  }
  const hydrated = passed.map(({ cluster, result }) => ({
    folder: cluster ?? DefaultClusterFolder,
    // As nomos prints them, and as they are applied: a declared special Namespace carries deletion: detach.
    objects: result.complete ? withSpecialNamespacesDetached(result.objects) : [],
  }));
  const json = options.outputFormat === OutputFormat.Json;
  // nomos's JSON goes through its typed conversion as its per-object files do; only a YAML stream keeps them.
  const all = hydrated.flatMap((h) => h.objects.map(json ? hydratedObject : flatHydratedObject));
  const encode = json ? toJsonList : toYamlStream;
  if (options.output !== undefined) {
    // One cluster: its files at the top; several (failed ones count, as in nomos): a folder each.
    const perCluster = results.length > 1;
    const files = outputFiles(hydrated, perCluster, json ? ".json" : ".yaml");
    for (const [path, content] of files) {
      const file = join(options.output, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, encode(content));
    }
    out(`${all.length} object(s) written to ${options.output}${perCluster ? ` for ${hydrated.length} clusters` : ""}`);
  } else if (options.flat !== undefined) {
    await mkdir(dirname(options.flat), { recursive: true });
    await writeFile(options.flat, encode(all));
    out(`${all.length} object(s) written to ${options.flat}`);
  } else if (json) {
    process.stdout.write(`${printableJson(toJsonList(all))}\n`);
  } else {
    // The repository's text on the reader's terminal, escaped as every command's output is (terminal-text.ts):
    // `yaml` escapes C0 itself but leaves DEL and C1 raw, so a stream holding one is written again with
    // every string double-quoted and those as `\xHH` (the same objects when read back, to a pipe too).
    const stream = toYamlStream(all);
    process.stdout.write(
      /[\x7f-\x9f]/.test(stream)
        ? all.map((o) => `---\n${printableYaml(o, { version: "1.1", indentSeq: false })}`).join("")
        : stream,
    );
  }
  return failed ? 1 : 0;
}

/**
 * Each file of --output and the objects it holds, as nomos names them: with several clusters, each
 * path starts with its cluster's folder, lower-cased as the whole path is, so clusters whose names
 * differ only in case share a folder, and a path two objects share there takes the group in both.
 */
function outputFiles(
  clusters: readonly { readonly folder: string; readonly objects: readonly DeclaredObject[] }[],
  perCluster: boolean,
  extension: ".yaml" | ".json",
): Map<string, JsonObject[]> {
  const byFolder = new Map<string, DeclaredObject[]>();
  for (const { folder, objects } of clusters) {
    const key = perCluster ? folder.toLowerCase() : "";
    byFolder.set(key, [...(byFolder.get(key) ?? []), ...objects]);
  }
  const files = new Map<string, JsonObject[]>();
  for (const [folder, objects] of byFolder)
    hydratedPaths(objects).forEach((path, i) => {
      // nomos names a file by the format it holds: kind_name.json with --format json.
      const file = join(folder, path.replace(/\.yaml$/, extension));
      const object = objects[i];
      if (object !== undefined) files.set(file, [...(files.get(file) ?? []), hydratedObject(object)]);
    });
  return files;
}

/**
 * Objects as `nomos hydrate --format json` writes them: a `v1 List`, keys sorted, indented by tabs, with
 * `<`, `>`, `&`, U+2028 and U+2029 escaped as Go's encoding/json escapes them, and no final newline.
 */
export function toJsonList(objects: readonly JsonObject[]): string {
  return JSON.stringify({ apiVersion: "v1", items: objects, kind: "List" }, null, "\t").replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function isSafeFolderName(name: string): boolean {
  return name !== "." && name !== ".." && !/[/\\\0]/.test(name);
}

/** The field of an object that cannot be part of its file's path, as `kind "../x"`; undefined when all can. */
function unsafePart(object: DeclaredObject): string | undefined {
  const parts = { kind: object.kind, group: object.group, namespace: object.id.namespace, name: object.id.name };
  for (const [field, value] of Object.entries(parts))
    if (value !== "" && !isSafeFolderName(value)) return `${field} ${JSON.stringify(value)}`;
  return undefined;
}
