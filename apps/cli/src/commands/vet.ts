import type { SourceFormat } from "@driftless/api";
import { builtinKinds, readSource, type SourceError, type SyncScope } from "@driftless/source";

/**
 * `driftless vet DIR`: every check the reconciler runs on a source that needs no cluster (parse,
 * names, namespaces, depends-on syntax, scope, the hierarchy rules, duplicates after inheritance),
 * with Config Sync's codes and file paths. Kinds beyond the built-in ones are not checked against a
 * cluster. Exit 1 when anything is wrong.
 */
export async function vet(
  dir: string,
  options: { readonly format: SourceFormat; readonly scope: SyncScope },
  out: (line: string) => void,
): Promise<number> {
  const source = await readSource(dir, {
    scope: options.scope,
    kinds: builtinKinds,
    format: options.format,
    allowUnknownKinds: true,
  });
  for (const error of source.errors) out(formatError(error));
  const objects = source.complete ? source.objects : source.partialObjects;
  out(
    `${source.fileCount} file(s), ${objects.length} object(s), ${source.localConfigSkipped} local-config skipped, ${source.errors.length} error(s)`,
  );
  return source.complete ? 0 : 1;
}

export function formatError(error: SourceError): string {
  const where = error.sourcePaths.length > 0 ? ` (${error.sourcePaths.join(", ")})` : "";
  return `${error.code}: ${error.message}${where}`;
}
