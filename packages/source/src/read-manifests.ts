/**
 * Step one, needing no cluster: every manifest file under the directory to validated `Manifest`s.
 */
import { SourceFormat } from "@driftless/api";
import { ManifestLimitError, SourceReadError } from "./errors.ts";
import type { SourceError } from "./errors.ts";
import { expandDocuments } from "./expand.ts";
import { isHierarchyFile } from "./hierarchy-layout.ts";
import { formatChars, SourceLimits } from "./limits.ts";
import type { Manifest } from "./manifest.ts";
import { toManifest } from "./manifest.ts";
import { parseManifestText } from "./parse.ts";
import { listManifestFiles, readFiles } from "./read-files.ts";
import type { ReadFilesOptions, SourceFile } from "./read-files.ts";
import type { ManifestSet } from "./result.ts";

export interface ReadManifestsOptions extends ReadFilesOptions {
  /**
   * `hierarchy` reads only files below `system/`, `cluster/`, `clusterregistry/` and `namespaces/`,
   * as Config Sync does; anything else is ignored. Default `unstructured`: every file.
   */
  readonly format?: SourceFormat;
  /** The checkout holding `dir`, inside which symlinked files may lead (see `listManifestFiles`). */
  readonly checkoutDir?: string;
}

interface FileOutcome {
  readonly manifests: readonly Manifest[];
  /** `manifests` and the flawed ones, in document order. */
  readonly identified: readonly Manifest[];
  readonly errors: readonly SourceError[];
  readonly localConfigSkipped: number;
  readonly aliasChars?: number;
}

/**
 * Reads every `.yaml`, `.yml` and `.json` file under `dir` (as Config Sync: hidden ones too, but not in `.git`
 * directories nor below `.github`, `.gitlab` or `.gitlab-ci.yml`; symlinks followed only inside `dir`). Manifests and errors come out in path order, then document order.
 */
export async function readManifests(dir: string, options: ReadManifestsOptions = {}): Promise<ManifestSet> {
  const listed = await listManifestFiles(
    dir,
    options.checkoutDir === undefined ? {} : { checkoutDir: options.checkoutDir },
  );
  const listing =
    options.format === SourceFormat.Hierarchy
      ? { ...listed, files: listed.files.filter((f) => isHierarchyFile(f.sourcePath)) }
      : listed;
  // Indexed by file so completion order does not leak into the result.
  const outcomes: (FileOutcome | undefined)[] = new Array<FileOutcome | undefined>(listing.files.length).fill(
    undefined,
  );
  // Files are handed over in path order, so which file crosses the per-source limit is always the same.
  let aliasChars = 0;
  await readFiles(
    listing.files,
    (index, text) => {
      const file = listing.files[index];
      if (!file) return;
      const outcome = readOne(text, file);
      const added = outcome.aliasChars ?? 0;
      if (added > 0 && aliasChars + added > SourceLimits.maxAliasCharsPerSource) {
        outcomes[index] = overAliasLimit(file.sourcePath);
      } else {
        aliasChars += added;
        outcomes[index] = outcome;
      }
    },
    (index, error) => {
      outcomes[index] = { manifests: [], identified: [], errors: [error], localConfigSkipped: 0 };
    },
    options,
  );

  const manifests: Manifest[] = [];
  const identified: Manifest[] = [];
  const errors: SourceError[] = [...listing.errors];
  let localConfigSkipped = 0;
  for (const [index, found] of outcomes.entries()) {
    // Cannot happen unless readFiles breaks its contract; a file silently missing would prune its objects.
    const outcome = found ?? notRead(listing.files[index]?.sourcePath ?? "?");
    manifests.push(...outcome.manifests);
    identified.push(...outcome.identified);
    errors.push(...outcome.errors);
    localConfigSkipped += outcome.localConfigSkipped;
  }
  // Listing problems (symlinks) and file problems interleaved by path, as a user reads the tree.
  const byPath = errors
    .map((error, order) => ({ error, order, path: error.sourcePaths[0] ?? "" }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.order - b.order))
    .map(({ error }) => error);
  return { manifests, identified, errors: byPath, fileCount: listing.files.length, localConfigSkipped };
}

function overAliasLimit(sourcePath: string): FileOutcome {
  const message =
    `${sourcePath}: YAML aliases in this file take the source over the limit of ` +
    `${formatChars(SourceLimits.maxAliasCharsPerSource)} of alias expansion (files are counted in path order)`;
  return {
    manifests: [],
    identified: [],
    errors: [new ManifestLimitError(message, { sourcePaths: [sourcePath] })],
    localConfigSkipped: 0,
  };
}

function notRead(sourcePath: string): FileOutcome {
  return {
    manifests: [],
    identified: [],
    errors: [new SourceReadError(`${sourcePath} was not read`, { sourcePaths: [sourcePath] })],
    localConfigSkipped: 0,
  };
}

/** Parses and validates one file's text; the text is not kept. */
function readOne(text: string, file: SourceFile): FileOutcome {
  const { sourcePath } = file;
  const parsed = parseManifestText(text, sourcePath, file.absolutePath);
  const expanded = expandDocuments(parsed.documents, sourcePath);
  const manifests: Manifest[] = [];
  const identified: Manifest[] = [];
  const errors: SourceError[] = [...parsed.errors, ...expanded.errors];
  for (const object of expanded.objects) {
    const checked = toManifest(object.value, sourcePath, object.location);
    if (checked.ok) {
      manifests.push(checked.manifest);
      identified.push(checked.manifest);
    } else {
      errors.push(...checked.errors);
      if (checked.flawed) identified.push(checked.flawed);
    }
  }
  return {
    manifests,
    identified,
    errors,
    localConfigSkipped: expanded.localConfigSkipped,
    aliasChars: parsed.aliasChars ?? 0,
  };
}
