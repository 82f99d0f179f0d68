import { readManifests } from "@driftless/source";

/**
 * `driftless vet DIR`: the checks that need no cluster (parse, names, namespaces, depends-on syntax,
 * duplicates), with Config Sync's codes and file paths. Exit 1 when anything is wrong.
 */
export async function vet(dir: string, out: (line: string) => void): Promise<number> {
  const set = await readManifests(dir);
  for (const error of set.errors) {
    const where = error.sourcePaths.length > 0 ? ` (${error.sourcePaths.join(", ")})` : "";
    out(`${error.code}: ${error.message}${where}`);
  }
  out(
    `${set.fileCount} file(s), ${set.manifests.length} object(s), ${set.localConfigSkipped} local-config skipped, ${set.errors.length} error(s)`,
  );
  return set.errors.length === 0 ? 0 : 1;
}
