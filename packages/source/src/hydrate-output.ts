/**
 * What `driftless hydrate` writes, in `nomos hydrate`'s form so the two can be compared file by file:
 * each object as declared (namespace filled in, inheritance done) without the metadata the
 * reconciler adds itself (the HNC labels and annotation of hierarchy Namespaces), keys sorted, one
 * file per object named `[namespace/]kind_name.yaml` (lower case; `kind.group_name.yaml` when two
 * objects would share a name).
 */
import { Document, Scalar, visit, type Tags } from "yaml";
import { DepthLabelSuffix, HncManagedByAnnotation, OriginalHncManagedByAnnotation } from "./hierarchy-layout.ts";
import { isJsonArray, isJsonObject } from "./json.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import type { DeclaredObject } from "./result.ts";
import { kubernetesTags } from "./yaml-options.ts";

const configSyncPrefixes = ["configmanagement.gke.io/", "configsync.gke.io/"] as const;
const ManagedAnnotationKey = "configmanagement.gke.io/managed";

/** The object as printed in a file of its own (--output): what the source declares, without reconciler metadata, keys sorted. */
export function hydratedObject(object: DeclaredObject): JsonObject {
  return hydrated(object, false);
}

/**
 * The object as printed in a --flat YAML file (and on stdout): as in a file of its own, but `status` and
 * `metadata.creationTimestamp` stay as declared (kubectl's `status: {}` and `creationTimestamp: null`), as nomos
 * prints them there; its one-file-per-object output drops both, as its conversion to typed objects fills them in.
 */
export function flatHydratedObject(object: DeclaredObject): JsonObject {
  return hydrated(object, true);
}

function hydrated(object: DeclaredObject, flat: boolean): JsonObject {
  const raw = sortKeys(object.raw) as JsonObject;
  const metadata = raw["metadata"];
  if (!isJsonObject(metadata)) return raw;
  const cleaned: Record<string, JsonValue> = { ...metadata };
  if (!flat) delete cleaned["creationTimestamp"];
  if (object.group === "" && object.kind === "Namespace") {
    const labels: Record<string, JsonValue> = isJsonObject(metadata["labels"]) ? { ...metadata["labels"] } : {};
    for (const key of Object.keys(labels)) if (key.endsWith(DepthLabelSuffix)) delete labels[key];
    const annotations: Record<string, JsonValue> = isJsonObject(metadata["annotations"])
      ? { ...metadata["annotations"] }
      : {};
    const original = annotations[OriginalHncManagedByAnnotation];
    delete annotations[OriginalHncManagedByAnnotation];
    if (original === undefined) delete annotations[HncManagedByAnnotation];
    else annotations[HncManagedByAnnotation] = original;
    setOrDrop(cleaned, "labels", labels);
    setOrDrop(cleaned, "annotations", annotations);
  }
  // As nomos prints them: Config Sync's own annotations (selectors, ...) and labels are instructions to the
  // reconciler, not part of the object; only `managed` stays, since it changes what is applied. As nomos
  // sets them again, an empty or null map is no field at all.
  for (const field of ["annotations", "labels"] as const) {
    const map = cleaned[field];
    if (map === null) delete cleaned[field];
    if (!isJsonObject(map)) continue;
    const kept: Record<string, JsonValue> = { ...map };
    for (const key of Object.keys(kept))
      if (
        configSyncPrefixes.some((prefix) => key.startsWith(prefix)) &&
        (field === "labels" || key !== ManagedAnnotationKey)
      )
        delete kept[key];
    setOrDrop(cleaned, field, kept);
  }
  if (flat) return { ...raw, metadata: cleaned };
  const { status: _status, ...rest } = raw;
  return { ...rest, metadata: cleaned };
}

/** Objects as one YAML stream, each document starting with `---`. */
export function toYamlStream(objects: readonly JsonObject[]): string {
  return objects.map((o) => `---\n${toYaml11(o)}`).join("");
}

/**
 * YAML 1.1 counts NEL, LS and PS as line breaks, where `yaml` writes them as any other character: a string
 * holding one left plain or quoted raw is read back changed (folded) or not at all by go-yaml (kubectl,
 * Config Sync: `could not find expected ':'`). Such strings are double-quoted, the three written as YAML's
 * escapes `\N`, `\L` and `\P`, which read back as the same characters.
 */
const Yaml11LineBreaks = /[\u0085\u2028\u2029]/g;
const Yaml11LineBreakEscapes: Readonly<Record<string, string>> = { "\u0085": "\\N", "\u2028": "\\L", "\u2029": "\\P" };

/**
 * A string is quoted when go-yaml v2 would read it as something else (kubernetesTags, as a source is read):
 * one it takes for a number (`0X1F`, `-0o17`, `1e1_0`) too, which YAML 1.1's own patterns left plain. Dates
 * and `1:30`, strings to go-yaml, stay quoted as YAML 1.1 (and nomos) write them.
 */
function quotingTags(tags: Tags): Tags {
  const read = kubernetesTags(tags);
  const isTime = (tag: Tags[number]): boolean =>
    typeof tag === "string"
      ? ["timestamp", "intTime", "floatTime"].includes(tag)
      : tag.tag === "tag:yaml.org,2002:timestamp" || ("format" in tag && tag.format === "TIME");
  return [...read, ...tags.filter(isTime)];
}

function toYaml11(object: JsonObject): string {
  const document = new Document(object, { version: "1.1", customTags: quotingTags });
  visit(document, {
    Scalar(_key, node) {
      if (typeof node.value === "string" && node.value.search(Yaml11LineBreaks) !== -1) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  // Every such character is now inside a double-quoted scalar, where an escape stands for it.
  return document
    .toString({ indentSeq: false, lineWidth: 0 })
    .replace(Yaml11LineBreaks, (c) => Yaml11LineBreakEscapes[c] ?? c);
}

/** Output path of each object, as `nomos hydrate --output` names them. */
export function hydratedPaths(objects: readonly DeclaredObject[]): string[] {
  const plain = objects.map((o) => fileName(o, false));
  const counts = new Map<string, number>();
  for (const path of plain) counts.set(path, (counts.get(path) ?? 0) + 1);
  return objects.map((o, i) => ((counts.get(plain[i] ?? "") ?? 0) > 1 ? fileName(o, true) : (plain[i] ?? "")));
}

function fileName(object: DeclaredObject, withGroup: boolean): string {
  const kind = withGroup ? `${object.kind}.${object.group}` : object.kind;
  const file = `${kind}_${object.id.name}.yaml`;
  return (object.id.namespace === "" ? file : `${object.id.namespace}/${file}`).toLowerCase();
}

function setOrDrop(metadata: Record<string, JsonValue>, key: string, map: JsonObject): void {
  if (Object.keys(map).length === 0) delete metadata[key];
  else metadata[key] = sortKeys(map);
}

function sortKeys(value: JsonValue): JsonValue {
  if (isJsonArray(value)) return value.map(sortKeys);
  if (!isJsonObject(value)) return value;
  const sorted: Record<string, JsonValue> = {};
  for (const key of Object.keys(value).sort()) {
    const child = value[key];
    // A data key may be named `__proto__`: defined as a key, not set as the prototype.
    if (child !== undefined)
      Object.defineProperty(sorted, key, {
        value: sortKeys(child),
        writable: true,
        enumerable: true,
        configurable: true,
      });
  }
  return sorted;
}
