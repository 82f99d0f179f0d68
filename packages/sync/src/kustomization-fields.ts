/**
 * A kustomization file read as Config Sync's kustomize metrics read it: kustomize's
 * types.Kustomization decoded by Go's yaml.v3 (the first document, keys matched exactly, unknown
 * keys ignored, a value of the wrong shape an error), each field kept under its Go name when it is
 * set (not Go's zero value). Not kustomization-paths.ts's parse: that one folds keys' case and reads
 * every document, as kustomize's own strict decoder does, and runs in the render container.
 */
import { parseAllDocuments } from "yaml";
import type { KustomizationField } from "@driftless/metrics";

/** How yaml.v3 decodes each field: a string, a list of strings or of objects, a string map, an object. */
type Shape = "string" | "strings" | "objects" | "map" | "object";

const fieldShapes: Readonly<Record<Exclude<KustomizationField, "TypeMeta">, readonly [key: string, shape: Shape]>> = {
  MetaData: ["metadata", "object"],
  OpenAPI: ["openapi", "map"],
  NamePrefix: ["namePrefix", "string"],
  NameSuffix: ["nameSuffix", "string"],
  Namespace: ["namespace", "string"],
  CommonLabels: ["commonLabels", "map"],
  Labels: ["labels", "objects"],
  CommonAnnotations: ["commonAnnotations", "map"],
  PatchesStrategicMerge: ["patchesStrategicMerge", "strings"],
  PatchesJson6902: ["patchesJson6902", "objects"],
  Patches: ["patches", "objects"],
  Images: ["images", "objects"],
  ImageTags: ["imageTags", "objects"],
  Replacements: ["replacements", "objects"],
  Replicas: ["replicas", "objects"],
  Vars: ["vars", "objects"],
  SortOptions: ["sortOptions", "object"],
  Resources: ["resources", "strings"],
  Components: ["components", "strings"],
  Crds: ["crds", "strings"],
  Bases: ["bases", "strings"],
  ConfigMapGenerator: ["configMapGenerator", "objects"],
  SecretGenerator: ["secretGenerator", "objects"],
  HelmGlobals: ["helmGlobals", "object"],
  HelmCharts: ["helmCharts", "objects"],
  HelmChartInflationGenerator: ["helmChartInflationGenerator", "objects"],
  GeneratorOptions: ["generatorOptions", "object"],
  Configurations: ["configurations", "strings"],
  Generators: ["generators", "strings"],
  Transformers: ["transformers", "strings"],
  Validators: ["validators", "strings"],
  BuildMetadata: ["buildMetadata", "strings"],
};

export type Json = Readonly<Record<string, unknown>>;

/** The fields a kustomization sets, by Go name: strings, string lists, object lists, objects. */
export type KustomizationFields = Readonly<Partial<Record<KustomizationField, unknown>>>;

/** Thrown where yaml.v3 would fail to decode the file: Config Sync then records no usage at all. */
export class UnreadableKustomization extends Error {}

/** The fields `text` sets, as Config Sync's reader decodes them. */
export function readKustomizationFields(text: string, where: string): KustomizationFields {
  const doc = parseAllDocuments(text, { version: "1.2", merge: true })[0];
  if (doc === undefined) return {}; // an empty file decodes to an empty Kustomization
  if (doc.errors.length > 0) throw new UnreadableKustomization(`${where}: ${doc.errors[0]?.message}`);
  const js: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (js === null || js === undefined) return {};
  if (!isRecord(js)) throw new UnreadableKustomization(`${where} is not a mapping`);
  const fields: Partial<Record<KustomizationField, unknown>> = {};
  if (isSet(js["kind"], "string") || isSet(js["apiVersion"], "string")) fields.TypeMeta = true;
  for (const [name, [key, shape]] of Object.entries(fieldShapes)) {
    const value = js[key];
    if (value === undefined || value === null) continue;
    if (!fits(value, shape)) throw new UnreadableKustomization(`${where}: ${key} is not a ${shape}`);
    if (isSet(value, shape)) fields[name as KustomizationField] = value;
  }
  return fields;
}

/**
 * Config Sync runs `kustomize edit add buildmetadata originAnnotations` on the sync directory's
 * kustomization before the build (unless it asks for origin annotations already), and reads it
 * back for the metrics: kustomize's edit also fixes deprecated fields and writes kind and
 * apiVersion. Undefined when no edit happens; `read` unchanged when kustomize refuses the file.
 */
export function fieldsAfterConfigSyncEdit(text: string, read: KustomizationFields): KustomizationFields | undefined {
  const buildMetadata = asArray(read.BuildMetadata);
  if (buildMetadata.includes("originAnnotations")) return undefined;
  // kustomize's edit decodes with Go's encoding/json: keys folded, an unknown key refused (no edit).
  const doc = parseAllDocuments(text, { version: "1.2", merge: true })[0];
  const js: unknown = doc?.toJS({ maxAliasCount: 1000 }) ?? {};
  const folded = new Map<string, unknown>();
  for (const [key, value] of Object.entries(isRecord(js) ? js : {})) folded.set(key.toLowerCase(), value);
  folded.delete("kind");
  folded.delete("apiversion");
  // Written back with encoding/json's omitempty: an empty list, map or string is dropped.
  const fields: Partial<Record<KustomizationField, unknown>> = { TypeMeta: true };
  for (const [name, [key, shape]] of Object.entries(fieldShapes) as [KustomizationField, [string, Shape]][]) {
    const value = folded.get(key.toLowerCase());
    folded.delete(key.toLowerCase());
    if (value === undefined || value === null) continue;
    if (!fits(value, shape)) return read;
    if (!isEmpty(value, shape)) fields[name] = value;
  }
  if (folded.size > 0) return read;
  // kustomize's FixKustomization: bases into resources, imageTags into images, the old helm generator into helmCharts.
  moveInto(fields, "Bases", "Resources");
  moveInto(fields, "ImageTags", "Images");
  const legacy = asArray(fields.HelmChartInflationGenerator).filter(isRecord);
  if (
    fields.HelmGlobals === undefined &&
    legacy.some((g) => isSet(g["chartHome"], "string") || isSet(g["helmHome"], "string"))
  )
    fields.HelmGlobals = {};
  moveInto(fields, "HelmChartInflationGenerator", "HelmCharts");
  fields.BuildMetadata = [...asArray(fields.BuildMetadata), "originAnnotations"];
  return fields;
}

function moveInto(
  fields: Partial<Record<KustomizationField, unknown>>,
  from: KustomizationField,
  to: KustomizationField,
): void {
  const moved = asArray(fields[from]);
  delete fields[from];
  const merged = [...asArray(fields[to]), ...moved];
  if (merged.length > 0) fields[to] = merged;
}

/** Go's zero value after yaml.v3 decoding: null, an empty string; an empty list or map is set. */
function isSet(value: unknown, shape: Shape): boolean {
  if (value === null || value === undefined) return false;
  return shape !== "string" || value !== "";
}

/** encoding/json's omitempty: a pointer to an empty object is kept. */
function isEmpty(value: unknown, shape: Shape): boolean {
  if (value === "" || (Array.isArray(value) && value.length === 0)) return true;
  return shape === "map" && isRecord(value) && Object.keys(value).length === 0;
}

function fits(value: unknown, shape: Shape): boolean {
  switch (shape) {
    case "string":
      return isScalar(value);
    case "strings":
      return Array.isArray(value) && value.every((v) => v === null || isScalar(v));
    case "objects":
      return Array.isArray(value) && value.every((v) => v === null || isRecord(v));
    case "map":
      return isRecord(value) && Object.values(value).every((v) => v === null || isScalar(v));
    case "object":
      return isRecord(value);
  }
}

function isScalar(value: unknown): boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

export function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A string list's entries as yaml.v3 decodes them (null as ""). */
export function asStrings(value: unknown): string[] {
  return asArray(value).map((v) => (v === null || v === undefined ? "" : String(v)));
}
