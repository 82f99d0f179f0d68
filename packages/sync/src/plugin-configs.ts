/**
 * Which plugin configurations kustomize v5.8 loads from a `generators`/`transformers`/`validators`
 * entry, and which of them are its builtin plugins: decided as kustomize decides (its resource factory
 * and plugin loader), so that the confinement walk checks exactly what kustomize will read.
 */

type Json = Readonly<Record<string, unknown>>;

/**
 * kustomize's builtin plugins that read files (checked by the walk) and those that read none. Any
 * other kind with a builtin apiVersion fails kustomize's loader, and is refused by the walk.
 */
export const builtinKindsReadingFiles = [
  "ConfigMapGenerator",
  "SecretGenerator",
  "HelmChartInflationGenerator",
  "PatchTransformer",
  "PatchJson6902Transformer",
  "PatchStrategicMergeTransformer",
  "ReplacementTransformer",
  "ValueAddTransformer",
] as const;
export type BuiltinKindReadingFiles = (typeof builtinKindsReadingFiles)[number];

const builtinKindsReadingNothing: ReadonlySet<string> = new Set([
  "AnnotationsTransformer",
  "HashTransformer",
  "IAMPolicyGenerator",
  "ImageTagTransformer",
  "LabelTransformer",
  "NamespaceTransformer",
  "PrefixSuffixTransformer",
  "PrefixTransformer",
  "SuffixTransformer",
  "ReplicaCountTransformer",
]);

export type PluginKind =
  /** A builtin plugin; `reads` undefined for one that reads no file. */
  | { readonly is: "builtin"; readonly reads: BuiltinKindReadingFiles | undefined }
  /** A builtin apiVersion with a kind kustomize does not know (its loader fails). */
  | { readonly is: "unknownBuiltin"; readonly why: string }
  /** An exec, function or Go plugin: code of the repository. */
  | { readonly is: "other"; readonly why: string };

/**
 * kustomize's loader takes a configuration for a builtin when its apiVersion's group is empty and its
 * version is `builtin` (resid.ParseGroupVersion splits at the first '/'): `builtin` and `/builtin`.
 * apiVersion and kind are read by exact key (kyaml's field lookup), unlike the fields below them.
 */
export function pluginKind(config: Json): PluginKind {
  const apiVersion = config["apiVersion"];
  const kind = config["kind"];
  const shown = `${JSON.stringify(apiVersion ?? "")} ${typeof kind === "string" ? kind : JSON.stringify(kind ?? "")}`;
  if (apiVersion !== "builtin" && apiVersion !== "/builtin")
    return { is: "other", why: `${shown} is not one of kustomize's builtin plugins` };
  const reads = builtinKindsReadingFiles.find((k) => k === kind);
  if (reads !== undefined) return { is: "builtin", reads };
  if (typeof kind === "string" && builtinKindsReadingNothing.has(kind)) return { is: "builtin", reads: undefined };
  return { is: "unknownBuiltin", why: `${shown} is not one of kustomize's builtin plugins (no such kind)` };
}

/**
 * The plugin configurations among the objects of an entry or file: kustomize's resource factory
 * replaces an object whose kind ends in `List` (List, ResourceList, FooList) and that has `items`
 * by those items, recursively.
 */
export function pluginConfigs(objects: readonly Json[], depth = 0): Json[] {
  return objects.flatMap((object) => {
    const kind = object["kind"];
    const items = object["items"];
    const isList = typeof kind === "string" && kind.endsWith("List") && "items" in object;
    if (!isList || depth > 100) return [object];
    return Array.isArray(items) ? pluginConfigs(items.filter(isRecord), depth + 1) : [];
  });
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
