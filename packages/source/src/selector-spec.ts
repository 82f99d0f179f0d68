/**
 * The spec of a ClusterSelector or NamespaceSelector, decoded with the types Config Sync's Go types give
 * it. Config Sync decodes these objects into typed structs before using them, so a value of the wrong type
 * (`matchLabels: {x: y}`, which YAML 1.1 reads as a boolean) is KNV1006, "could not be parsed", not a
 * selector error; null reads as the zero value, as its converter reads it.
 */
import { decodeLabelSelector, decodeString } from "./label-selector.ts";
import type { LabelSelectorSpec } from "./label-selector.ts";
import { HierarchyKind, isKind } from "./hierarchy-layout.ts";
import { unparsableConfig } from "./hierarchy-raw.ts";
import { describeJsonType, isJsonObject } from "./json.ts";
import type { Manifest } from "./manifest.ts";
import type { UnparsableConfigError } from "./errors.ts";

export interface SelectorSpec {
  /** NamespaceSelector's `spec.mode` ("" when absent); always "" for a ClusterSelector, which has none. */
  readonly mode: string;
  readonly selector: LabelSelectorSpec;
}

export function decodeSelectorSpec(manifest: Manifest): SelectorSpec | UnparsableConfigError {
  const spec = manifest.raw["spec"] ?? null;
  if (spec !== null && !isJsonObject(spec))
    return unparsable(manifest, `spec must be a mapping, found ${describeJsonType(spec)}`);
  const mode = isKind(manifest, HierarchyKind.NamespaceSelector)
    ? decodeString("spec.mode", spec?.["mode"])
    : { value: "" };
  if ("unparsable" in mode) return unparsable(manifest, mode.unparsable);
  const selector = decodeLabelSelector("spec.selector", spec?.["selector"]);
  if ("unparsable" in selector) return unparsable(manifest, selector.unparsable);
  return { mode: mode.value, selector: selector.value };
}

function unparsable(manifest: Manifest, problem: string): UnparsableConfigError {
  return unparsableConfig(manifest, problem);
}
