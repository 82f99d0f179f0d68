/**
 * Writes manifests/crds/*.yaml from crds.ts. Run after changing a schema:
 *   node packages/api/src/generate-crds.ts
 * crds.test.ts fails when the committed YAML and the code disagree.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { crdFiles, type CustomResourceDefinition } from "./crds.ts";

export const crdDirectory = join(import.meta.dirname, "..", "..", "..", "manifests", "crds");

export function renderCrd(crd: CustomResourceDefinition): string {
  const header =
    "# Generated from packages/api/src/crds.ts by `node packages/api/src/generate-crds.ts`. Do not edit.\n";
  // lineWidth 0: never fold long descriptions or patterns, so diffs stay line-per-field.
  // aliasDuplicateObjects off: shared schema objects are written out in full, not as YAML anchors,
  // which some tools that read CRDs (kustomize, helm) handle badly.
  return header + stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false });
}

async function main(): Promise<void> {
  for (const { file, crd } of crdFiles) {
    await writeFile(join(crdDirectory, file), renderCrd(crd));
    console.log(`wrote manifests/crds/${file}`);
  }
}

if (import.meta.main) await main();
