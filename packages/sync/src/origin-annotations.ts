/**
 * kustomize's origin annotation (`config.kubernetes.io/origin`) on every rendered object, as Config
 * Sync adds `buildMetadata: [originAnnotations]` to the sync directory's kustomization before each
 * build. The checkout is shared (and read-only to the render container), so the edited kustomization
 * goes into a mirror instead: real directories from the repository root down to the sync directory,
 * every other entry a symlink to the checkout's. kustomize resolves a directory it loads to its real
 * path, and names origins by the relative paths written in the kustomization, so every path the
 * kustomization names reaches the same file, and every origin path is the one Config Sync writes
 * (relative to the sync directory: `path: ../base/cm.yaml`).
 */
import { mkdir, readdir, readFile, realpath, symlink, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { parseDocument, isSeq } from "yaml";
import { kustomizationFileNames } from "./kustomization-paths.ts";

/** kustomize's option name, and the annotation it writes. */
export const OriginAnnotationsOption = "originAnnotations";
export const OriginAnnotation = "config.kubernetes.io/origin";

export interface BuildDirectory {
  /** What to run `kustomize build` on: the mirror's sync directory, or `dir` itself. */
  readonly dir: string;
  /** The mirror's repository root and the checkout's, to name checkout paths in kustomize's messages. */
  readonly mirrorRoot?: string;
  readonly repositoryRoot?: string;
}

/**
 * The directory to build for `dir` with origin annotations on. `dir` itself when its kustomization
 * already asks for them, or cannot be read as YAML (Config Sync leaves such a file alone, and
 * kustomize's own message about it is the better one).
 */
export async function originAnnotatedBuildDir(
  dir: string,
  repositoryRoot: string,
  scratch: string,
): Promise<BuildDirectory> {
  const realDir = await realpath(dir);
  const found = await kustomizationIn(realDir);
  if (found === undefined) return { dir };
  const edited = withOriginAnnotations(found.text);
  if (edited === undefined) return { dir };
  const realRoot = await realpath(repositoryRoot);
  const mirrorRoot = join(scratch, "origin-mirror");
  const steps = relative(realRoot, realDir)
    .split(sep)
    .filter((s) => s !== "");
  let from = realRoot;
  let to = mirrorRoot;
  await mkdir(to, { recursive: true });
  for (const step of [...steps, undefined]) {
    // At the sync directory (`step` undefined) only the kustomization is left out; above it, the next step.
    const skip = step ?? found.name;
    for (const entry of await readdir(from)) if (entry !== skip) await symlink(join(from, entry), join(to, entry));
    if (step === undefined) break;
    from = join(from, step);
    to = join(to, step);
    await mkdir(to);
  }
  await writeFile(join(to, found.name), edited);
  return { dir: to, mirrorRoot, repositoryRoot: realRoot };
}

async function kustomizationIn(dir: string): Promise<{ name: string; text: string } | undefined> {
  for (const name of kustomizationFileNames) {
    const text = await readFile(join(dir, name), "utf8").catch(() => undefined);
    if (text !== undefined) return { name, text };
  }
  return undefined;
}

/**
 * The kustomization with `originAnnotations` added to `buildMetadata`; undefined when it has it
 * already or is not a YAML mapping (left to kustomize).
 */
export function withOriginAnnotations(text: string): string | undefined {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return undefined;
  const contents: unknown = doc.toJS();
  if (contents === null || typeof contents !== "object" || Array.isArray(contents)) return undefined;
  const current = doc.get("buildMetadata");
  if (current === undefined || current === null) {
    doc.set("buildMetadata", [OriginAnnotationsOption]);
    return doc.toString();
  }
  if (!isSeq(current)) return undefined;
  if (current.items.some((item) => String((item as { value?: unknown }).value ?? item) === OriginAnnotationsOption))
    return undefined;
  current.add(OriginAnnotationsOption);
  return doc.toString();
}
