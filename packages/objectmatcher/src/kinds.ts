/**
 * Which kinds are built into the API server (and so accept strategic merge patches and get typed
 * defaulting), and the schema of each: the generated facts of their Go types (`facts.ts`). A kind not
 * built in is a custom resource: JSON merge semantics, with the list and map semantics of its CRD's
 * schema when the caller hands one over (`CustomResourceSchemas`), lists atomic when not. That is also
 * the safe answer for a built-in kind newer than the generated facts: every kind accepts a JSON merge patch.
 */
import { generatedKinds, kindStruct, structSchema } from "./facts.ts";
import type { FieldSchema } from "./schema.ts";
import { DEFAULT_POD_TOLERATIONS } from "./server-filled.ts";

export const PatchType = {
  StrategicMerge: "strategic-merge",
  Merge: "merge",
} as const;
export type PatchType = (typeof PatchType)[keyof typeof PatchType];

/** The Content-Type to send each patch type with. */
export const PATCH_CONTENT_TYPE: Readonly<Record<PatchType, string>> = {
  "strategic-merge": "application/strategic-merge-patch+json",
  merge: "application/merge-patch+json",
};

export interface KindInfo {
  readonly group: string;
  readonly kind: string;
  readonly builtIn: boolean;
  readonly patchType: PatchType;
  readonly schema: FieldSchema;
}

/** Where the matcher finds the schema of a custom resource (see `CustomResourceSchemaRegistry`). */
export interface CustomResourceSchemas {
  /** The schema of `apiVersion`/`kind`, or undefined when unknown (then every list is atomic). */
  schemaFor(apiVersion: string, kind: string): FieldSchema | undefined;
}

const OBJECT_META = "meta/v1.ObjectMeta";

/** Built-in kinds the generated Go types no longer carry (removed APIs still seen in old manifests). */
const LEGACY_BUILT_IN = new Set(["policy/PodSecurityPolicy", "extensions/PodSecurityPolicy"]);

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

let byGroupKind: Map<string, string> | undefined;

/** `group/Kind` → a Go struct of it, for a version the facts lack: a GA version when there is one. */
function groupKindStructs(): Map<string, string> {
  if (byGroupKind) return byGroupKind;
  byGroupKind = new Map();
  for (const entry of generatedKinds()) {
    const [apiVersion = "", kind = ""] = entry.split(" ");
    const key = `${groupOf(apiVersion)}/${kind}`;
    const version = apiVersion.slice(apiVersion.indexOf("/") + 1);
    const stable = /^v\d+$/.test(version);
    if (!byGroupKind.has(key) || stable) byGroupKind.set(key, kindStruct(apiVersion, kind) ?? "");
  }
  return byGroupKind;
}

/** apiVersion → kind → the built-in kind, or null when not built in: resolved on every match. */
const builtInCache = new Map<string, Map<string, KindInfo | null>>();

function builtInKind(apiVersion: string, kind: string): KindInfo | undefined {
  let kinds = builtInCache.get(apiVersion);
  if (!kinds) {
    kinds = new Map();
    builtInCache.set(apiVersion, kinds);
  }
  const cached = kinds.get(kind);
  if (cached !== undefined) return cached ?? undefined;
  const group = groupOf(apiVersion);
  const struct = kindStruct(apiVersion, kind) ?? groupKindStructs().get(`${group}/${kind}`);
  let info: KindInfo | undefined;
  if (struct !== undefined && struct !== "") {
    const schema = group === "" && kind === "Pod" ? withDefaultTolerations(structSchema(struct)) : structSchema(struct);
    info = { group, kind, builtIn: true, patchType: PatchType.StrategicMerge, schema };
  } else if (LEGACY_BUILT_IN.has(`${group}/${kind}`)) {
    info = { group, kind, builtIn: true, patchType: PatchType.StrategicMerge, schema: customResource() };
  }
  kinds.set(kind, info ?? null);
  return info;
}

export function resolveKind(
  apiVersion: string | undefined,
  kind: string | undefined,
  schemas?: CustomResourceSchemas,
): KindInfo {
  const v = apiVersion ?? "";
  const k = kind ?? "";
  const builtIn = builtInKind(v, k);
  if (builtIn) return builtIn;
  const declared = schemas?.schemaFor(v, k);
  return {
    group: groupOf(v),
    kind: k,
    builtIn: false,
    patchType: PatchType.Merge,
    schema: declared ?? customResource(),
  };
}

let customResourceSchema: FieldSchema | undefined;

/** Every custom resource still has typed `metadata`: labels, finalizers and owner references merge. */
function customResource(): FieldSchema {
  customResourceSchema ??= { fields: { metadata: structSchema(OBJECT_META) } };
  return customResourceSchema;
}

/** The ObjectMeta schema, which a custom resource's schema uses for its `metadata`. */
export function objectMetaSchema(): FieldSchema {
  return structSchema(OBJECT_META);
}

/** A Pod as stored: the DefaultTolerationSeconds admission plugin has appended its tolerations. */
function withDefaultTolerations(pod: FieldSchema): FieldSchema {
  const spec = pod.fields?.["spec"] ?? {};
  const tolerations = spec.fields?.["tolerations"] ?? {};
  const admissionItems = DEFAULT_POD_TOLERATIONS.map((t) => ({ ...t }));
  return {
    ...pod,
    fields: {
      ...pod.fields,
      spec: { ...spec, fields: { ...spec.fields, tolerations: { ...tolerations, admissionItems } } },
    },
  };
}

/** The built-in group-kinds the generated facts know, as `group/Kind` (`/Pod` for the core group). */
export function builtInGroupKinds(): string[] {
  return [...groupKindStructs().keys()];
}
