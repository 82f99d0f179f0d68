/**
 * Config Sync's kustomize metrics (kpt-config-sync pkg/kmetrics): what one `kustomize build` of a
 * sync's kustomization used and produced. Config Sync's hydration-controller sends them through the
 * same collector as its other metrics, so they carry the same `config_sync_` prefix. All but the
 * latency histogram are last values: each build's figures replace the previous build's series.
 *
 * Registered on the first build only, as Config Sync's views export nothing before a recording: a
 * sync that renders nothing serves no kustomize series, and a usage gauge the last build gave no
 * series is unregistered (no HELP line without a sample).
 */
import type { Registry } from "prom-client";
import { gauge, histogram, type GaugeHandle, type HistogramHandle, type Labels } from "./handles.ts";

/** Config Sync's kustomize_build_latency bounds, in milliseconds. */
export const KUSTOMIZE_BUILD_BUCKETS_MS = [0, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240] as const;

/** kustomize's types.Kustomization field names (Go's, as Config Sync's field_name label has them). */
export const KustomizationField = {
  TypeMeta: "TypeMeta",
  MetaData: "MetaData",
  OpenAPI: "OpenAPI",
  NamePrefix: "NamePrefix",
  NameSuffix: "NameSuffix",
  Namespace: "Namespace",
  CommonLabels: "CommonLabels",
  Labels: "Labels",
  CommonAnnotations: "CommonAnnotations",
  PatchesStrategicMerge: "PatchesStrategicMerge",
  PatchesJson6902: "PatchesJson6902",
  Patches: "Patches",
  Images: "Images",
  ImageTags: "ImageTags",
  Replacements: "Replacements",
  Replicas: "Replicas",
  Vars: "Vars",
  SortOptions: "SortOptions",
  Resources: "Resources",
  Components: "Components",
  Crds: "Crds",
  Bases: "Bases",
  ConfigMapGenerator: "ConfigMapGenerator",
  SecretGenerator: "SecretGenerator",
  HelmGlobals: "HelmGlobals",
  HelmCharts: "HelmCharts",
  HelmChartInflationGenerator: "HelmChartInflationGenerator",
  GeneratorOptions: "GeneratorOptions",
  Configurations: "Configurations",
  Generators: "Generators",
  Transformers: "Transformers",
  Validators: "Validators",
  BuildMetadata: "BuildMetadata",
} as const;
export type KustomizationField = (typeof KustomizationField)[keyof typeof KustomizationField];

/** `deprecating_field`: fields kustomize may drop. */
export type DeprecatingField = "Vars" | "Bases" | "Crds";
/** `simplification_field`: the simplified transformers, replacements by sources and by targets. */
export type SimplificationField = "Images" | "Replicas" | "ReplacementSources" | "ReplacementTargets";
/** `k8s_metadata_transformer`: builtin transformers of object metadata. */
export type MetadataTransformer =
  "NamePrefix" | "NameSuffix" | "Namespace" | "CommonLabels" | "Labels" | "CommonAnnotations";
/** `helm_inflator`. */
export type HelmInflator = "HelmCharts" | "HelmChartInflationGenerator";
/** `base_source`. */
export type BaseSource = "Local" | "Remote";
/** `patch_field`. */
export type PatchField = "Patches" | "PatchesStrategicMerge" | "PatchesJson6902";
/** `top_tier_field` (the generators' values are plural, as in Config Sync). */
export type TopTierField =
  "Resources" | "Generators" | "SecretGenerators" | "ConfigMapGenerators" | "Transformers" | "Validators";

type Counts<K extends string> = Readonly<Partial<Record<K, number>>>;

/** What a kustomization and every one it reaches use, summed; a key is present only where Config Sync records it. */
export interface KustomizeUsage {
  /** kustomize_field_count{field_name}: kustomizations that set the field. */
  readonly fields: Counts<KustomizationField>;
  /** kustomize_deprecating_field_count{deprecating_field}: entries. */
  readonly deprecatingFields: Counts<DeprecatingField>;
  /** kustomize_simplification_adoption_count{simplification_field}. */
  readonly simplification: Counts<SimplificationField>;
  /** kustomize_builtin_transformers{k8s_metadata_transformer}. */
  readonly metadataTransformers: Counts<MetadataTransformer>;
  /** kustomize_helm_inflator_count{helm_inflator}: charts. */
  readonly helmInflators: Counts<HelmInflator>;
  /** kustomize_base_count{base_source}. */
  readonly bases: Counts<BaseSource>;
  /** kustomize_patch_count{patch_field}: patches. */
  readonly patches: Counts<PatchField>;
  /** kustomize_ordered_top_tier_metrics{top_tier_field}: entries. */
  readonly topTier: Counts<TopTierField>;
}

/** One build, as the reconciler saw it. */
export interface KustomizeBuildReport {
  /** kustomize_build_latency: milliseconds the build took. */
  readonly latencyMs: number;
  /** kustomize_resource_count: objects in the build's output (0 when it failed). */
  readonly resourceCount: number;
  /** Undefined when a kustomization could not be read: Config Sync then records no usage. */
  readonly usage: KustomizeUsage | undefined;
}

export interface KustomizeMetrics {
  /** Records one build: its usage series replace the previous build's. */
  recordKustomizeBuild(report: KustomizeBuildReport): void;
}

/**
 * A last-value gauge with one label, present only while the last build gave it a series: a gauge
 * left registered without any would serve a HELP line with no sample (registered, never recorded).
 */
class UsageGauge {
  readonly #registry: Registry;
  readonly #name: string;
  readonly #label: string;
  readonly #help: string;
  #handle: GaugeHandle<Labels> | undefined;

  constructor(registry: Registry, name: string, label: string, help: string) {
    this.#registry = registry;
    this.#name = name;
    this.#label = label;
    this.#help = help;
  }

  replace(counts: Readonly<Record<string, number | undefined>>): void {
    const entries = Object.entries(counts).filter((e): e is [string, number] => e[1] !== undefined);
    if (entries.length === 0) {
      if (this.#handle !== undefined) this.#registry.removeSingleMetric(this.#name);
      this.#handle = undefined;
      return;
    }
    this.#handle ??= gauge<Labels>(this.#registry, {
      name: this.#name,
      help: this.#help,
      labelNames: [this.#label],
    });
    this.#handle.reset();
    for (const [value, count] of entries) this.#handle.set({ [this.#label]: value }, count);
  }
}

type UsageGauges = { readonly [K in keyof KustomizeUsage]: UsageGauge };

function usageGauges(registry: Registry, prefix: string): UsageGauges {
  const g = (name: string, label: string, help: string): UsageGauge =>
    new UsageGauge(registry, `${prefix}${name}`, label, help);
  return {
    fields: g(
      "kustomize_field_count",
      "field_name",
      "Kustomizations of the last build (the sync directory's and those it reaches) that set each field",
    ),
    deprecatingFields: g(
      "kustomize_deprecating_field_count",
      "deprecating_field",
      "Entries of fields kustomize may deprecate (vars, bases, crds) in the last build",
    ),
    simplification: g(
      "kustomize_simplification_adoption_count",
      "simplification_field",
      "Entries of the simplification transformers (images, replicas, replacement sources and targets) in the last build",
    ),
    metadataTransformers: g(
      "kustomize_builtin_transformers",
      "k8s_metadata_transformer",
      "Use of the builtin transformers of object metadata (name prefix and suffix, namespace, labels, annotations) in the last build",
    ),
    helmInflators: g(
      "kustomize_helm_inflator_count",
      "helm_inflator",
      "Helm charts inflated by the last build, by field",
    ),
    bases: g("kustomize_base_count", "base_source", "Local and remote bases of the last build"),
    patches: g(
      "kustomize_patch_count",
      "patch_field",
      "Patches of the last build in patches, patchesStrategicMerge and patchesJson6902",
    ),
    topTier: g(
      "kustomize_ordered_top_tier_metrics",
      "top_tier_field",
      "Entries of resources, generators, secretGenerator, configMapGenerator, transformers and validators in the last build",
    ),
  };
}

interface BuildHandles {
  readonly resourceCount: GaugeHandle;
  readonly buildLatency: HistogramHandle;
}

function buildHandles(registry: Registry, prefix: string): BuildHandles {
  return {
    resourceCount: gauge(registry, {
      name: `${prefix}kustomize_resource_count`,
      help: "Objects output by the last kustomize build",
      labelNames: [],
    }),
    buildLatency: histogram(
      registry,
      { name: `${prefix}kustomize_build_latency`, help: "Milliseconds taken by kustomize build", labelNames: [] },
      KUSTOMIZE_BUILD_BUCKETS_MS,
    ),
  };
}

export function kustomizeMetrics(registry: Registry, prefix: string): KustomizeMetrics {
  const usage = usageGauges(registry, prefix);
  let build: BuildHandles | undefined;
  return {
    recordKustomizeBuild: (report) => {
      build ??= buildHandles(registry, prefix);
      build.buildLatency.observe(report.latencyMs);
      build.resourceCount.set(report.resourceCount);
      // Config Sync records no usage when a kustomization cannot be read: the last build's stays.
      if (report.usage === undefined) return;
      for (const key of Object.keys(usage) as (keyof KustomizeUsage)[]) usage[key].replace(report.usage[key]);
    },
  };
}
