/**
 * What a sync directory's kustomization, and every kustomization its resources, bases and
 * components reach, use: Config Sync's kustomize metrics (pkg/kmetrics), counted the way Config
 * Sync counts them. A base reached twice counts twice (one count per reference, as kustomize builds
 * it); each kustomization sets a field once. Read by the reconciler from its own checkout, beside the
 * build, which in a pod runs in the render container.
 */
import { readdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import type { KustomizationField, KustomizeUsage } from "@driftless/metrics";
import { parseAllDocuments } from "yaml";
import { isGitRepoSpec } from "./git-repo-spec.ts";
import { kustomizationFileNames } from "./kustomization-paths.ts";
import {
  asArray,
  asStrings,
  fieldsAfterConfigSyncEdit,
  isRecord,
  readKustomizationFields,
  UnreadableKustomization,
  type KustomizationFields,
} from "./kustomization-fields.ts";

type Mutable<T> = { -readonly [K in keyof T]: Partial<Record<string, number>> };

/**
 * The usage of the kustomization in `dir`, reading only files inside `repositoryRoot`; undefined
 * when `dir` holds none, or one kustomization cannot be decoded (Config Sync records nothing then).
 */
export async function kustomizeUsage(dir: string, repositoryRoot: string): Promise<KustomizeUsage | undefined> {
  const counter = new UsageCounter(await realpath(repositoryRoot));
  try {
    const root = await counter.read(dir);
    if (root === undefined) return undefined;
    // Config Sync reads the root after its `kustomize edit add buildmetadata originAnnotations`.
    const fields = fieldsAfterConfigSyncEdit(root.text, root.fields) ?? root.fields;
    return await counter.count(dir, fields, new Set([await realpath(dir)]));
  } catch (error) {
    if (error instanceof UnreadableKustomization) return undefined;
    throw error;
  }
}

class UsageCounter {
  readonly #root: string;
  /** Each directory's total, so a base many overlays share is read once. */
  readonly #totals = new Map<string, Promise<KustomizeUsage>>();

  constructor(root: string) {
    this.#root = root;
  }

  /** The first kustomization file Config Sync's reader finds in `dir`, decoded; undefined without one. */
  async read(dir: string): Promise<{ text: string; fields: KustomizationFields } | undefined> {
    for (const name of kustomizationFileNames) {
      const text = await this.#readInside(join(dir, name));
      if (text !== undefined) return { text, fields: readKustomizationFields(text, join(dir, name)) };
    }
    return undefined;
  }

  /** The usage of the kustomization `k` in `dir` and of all it reaches; `path` holds the real directories above. */
  async count(dir: string, k: KustomizationFields, path: ReadonlySet<string>): Promise<KustomizeUsage> {
    const total = emptyUsage();
    const resources = asStrings(k.Resources);
    const bases = asStrings(k.Bases);
    let localBases = 0;
    for (const [i, entry] of [...resources, ...bases, ...asStrings(k.Components)].entries()) {
      const base = join(dir, entry);
      const real = await this.#nonEmptyDirectory(base);
      if (real === undefined) continue;
      // A component is read like a base but not counted as one.
      if (i < resources.length + bases.length) localBases++;
      // kustomize refuses a cycle; Config Sync's count would recurse forever: it stops here.
      if (path.has(real)) continue;
      add(total, await this.#total(base, real, path));
    }
    add(total, await ownUsage(k, dir, localBases, resources.filter(isGitRepoSpec).length, (p) => this.#readInside(p)));
    return total;
  }

  #total(dir: string, real: string, path: ReadonlySet<string>): Promise<KustomizeUsage> {
    let total = this.#totals.get(real);
    if (total === undefined) {
      total = this.read(dir).then((sub) =>
        sub === undefined ? emptyUsage() : this.count(dir, sub.fields, new Set([...path, real])),
      );
      this.#totals.set(real, total);
    }
    return total;
  }

  /** The real path of a directory with entries, inside the repository. */
  async #nonEmptyDirectory(dir: string): Promise<string | undefined> {
    const entries = await readdir(dir).catch(() => undefined);
    if (entries === undefined || entries.length === 0) return undefined;
    const real = await realpath(dir);
    return this.#contains(real) ? real : undefined;
  }

  /** A file's text when it is a readable file inside the repository (a render refuses any other). */
  async #readInside(file: string): Promise<string | undefined> {
    const real = await realpath(file).catch(() => undefined);
    if (real === undefined || !this.#contains(real)) return undefined;
    return readFile(real, "utf8").catch(() => undefined);
  }

  #contains(path: string): boolean {
    return path === this.#root || path.startsWith(`${this.#root}/`);
  }
}

/** One kustomization's own counts (Config Sync's, field by field). */
async function ownUsage(
  k: KustomizationFields,
  dir: string,
  localBases: number,
  remoteBases: number,
  read: (file: string) => Promise<string | undefined>,
): Promise<KustomizeUsage> {
  const u = emptyUsage();
  for (const field of Object.keys(k) as KustomizationField[]) u.fields[field] = 1;
  const len = (value: unknown): number =>
    Array.isArray(value) ? value.length : isRecord(value) ? Object.keys(value).length : 0;
  const some = <K extends string>(into: Partial<Record<K, number>>, key: K, n: number): void => {
    if (n > 0) into[key] = n;
  };
  some(u.topTier, "Resources", len(k.Resources));
  some(u.topTier, "Generators", len(k.Generators));
  some(u.topTier, "SecretGenerators", len(k.SecretGenerator));
  some(u.topTier, "ConfigMapGenerators", len(k.ConfigMapGenerator));
  some(u.topTier, "Transformers", len(k.Transformers));
  some(u.topTier, "Validators", len(k.Validators));
  some(u.patches, "Patches", len(k.Patches));
  some(u.patches, "PatchesStrategicMerge", len(k.PatchesStrategicMerge));
  some(u.patches, "PatchesJson6902", len(k.PatchesJson6902));
  some(u.bases, "Local", localBases);
  some(u.bases, "Remote", remoteBases);
  some(u.helmInflators, "HelmCharts", len(k.HelmCharts));
  some(u.helmInflators, "HelmChartInflationGenerator", len(k.HelmChartInflationGenerator));
  for (const field of ["NamePrefix", "NameSuffix", "Namespace"] as const)
    if (k[field] !== undefined) u.metadataTransformers[field] = 1;
  some(u.metadataTransformers, "CommonLabels", len(k.CommonLabels));
  // Labels are counted by their pairs, and recorded (0 too) whenever the field has entries.
  if (len(k.Labels) > 0)
    u.metadataTransformers.Labels = asArray(k.Labels).reduce<number>(
      (n, l) => n + (isRecord(l) ? len(l["pairs"]) : 0),
      0,
    );
  some(u.metadataTransformers, "CommonAnnotations", len(k.CommonAnnotations));
  some(u.simplification, "Images", len(k.Images));
  some(u.simplification, "Replicas", len(k.Replicas));
  if (len(k.Replacements) > 0) {
    u.simplification.ReplacementSources = len(k.Replacements);
    let targets = 0;
    for (const r of asArray(k.Replacements).filter(isRecord)) targets += await replacementTargets(r, dir, read);
    u.simplification.ReplacementTargets = targets;
  }
  some(u.deprecatingFields, "Vars", len(k.Vars));
  some(u.deprecatingFields, "Bases", len(k.Bases));
  some(u.deprecatingFields, "Crds", len(k.Crds));
  return u;
}

/** An inline replacement's targets, or those of the one replacement its `path` file holds (else none). */
async function replacementTargets(
  r: Readonly<Record<string, unknown>>,
  dir: string,
  read: (file: string) => Promise<string | undefined>,
): Promise<number> {
  const path = r["path"];
  if (typeof path !== "string" || path === "") return asArray(r["targets"]).length;
  const text = await read(join(dir, path));
  if (text === undefined) return 0;
  // Config Sync decodes the file as a single replacement: a list of them, or a decoding error, counts none.
  const doc = parseAllDocuments(text, { version: "1.2", merge: true })[0];
  const js: unknown = doc === undefined || doc.errors.length > 0 ? undefined : doc.toJS({ maxAliasCount: 1000 });
  return isRecord(js) ? asArray(js["targets"]).length : 0;
}

function emptyUsage(): Mutable<KustomizeUsage> {
  return {
    fields: {},
    deprecatingFields: {},
    simplification: {},
    metadataTransformers: {},
    helmInflators: {},
    bases: {},
    patches: {},
    topTier: {},
  };
}

/** Adds `more` into `into`, key by key. */
function add(into: Mutable<KustomizeUsage>, more: KustomizeUsage): void {
  for (const [group, counts] of Object.entries(more) as [keyof KustomizeUsage, Partial<Record<string, number>>][])
    for (const [key, n] of Object.entries(counts)) into[group][key] = (into[group][key] ?? 0) + (n ?? 0);
}
