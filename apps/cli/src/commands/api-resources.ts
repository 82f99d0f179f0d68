/**
 * `api-resources.txt` at the top of a source: the output of `kubectl api-resources`, which `nomos vet`
 * and `nomos hydrate` read to learn the scope of kinds they cannot look up without a cluster. driftless
 * reads it as they do, so a namespaced kind listed there but placed in cluster/ fails here too.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { knvErrorText } from "@driftless/api";
import { builtinKinds, splitApiVersion, type KindInfo, type KindResolver } from "@driftless/source";

/** The file's name, relative to the source directory (nomos's APIResourcesPath). */
export const ApiResourcesFile = "api-resources.txt";

const rerun = `Re-run "kubectl api-resources > ${ApiResourcesFile}" in the root policy directory`;

/** The file exists but cannot be read, or is not `kubectl api-resources` output (Config Sync's KNV1064). */
export class InvalidApiResourcesError extends Error {
  readonly code = "KNV1064";
  readonly sourcePath = ApiResourcesFile;
}

/** A scope per `group/Kind`, as the file lists them. */
type Scopes = ReadonlyMap<string, { readonly resource: string; readonly namespaced: boolean }>;

/**
 * The kinds a vet or hydrate of `dir` knows: the built-in ones, with the file's scopes over them (nomos
 * sets each listed kind's scope on top of its built-in table). CRDs declared in the source still come
 * first, as they do for any resolver. No file: the built-in kinds alone.
 */
export async function kindsFor(dir: string): Promise<KindResolver> {
  let text: string;
  try {
    text = await readFile(join(dir, ApiResourcesFile), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return builtinKinds;
    const why = error instanceof Error ? error.message : String(error);
    throw new InvalidApiResourcesError(`unable to read cached API resources: ${why}`, { cause: error });
  }
  return withScopes(parseApiResources(text));
}

/**
 * Reads `kubectl api-resources` output as nomos does: the columns from the header's APIVERSION on,
 * the last two of each line being NAMESPACED and KIND; the group is APIVERSION's part before `/`.
 */
export function parseApiResources(text: string): Scopes {
  const [header = "", ...lines] = text.split("\n");
  const column = header.indexOf("APIVERSION");
  if (column === -1) throw new InvalidApiResourcesError(`unable to find APIVERSION column. ${rerun}`);
  const scopes = new Map<string, { resource: string; namespaced: boolean }>();
  for (const line of lines) {
    if (line.length === 0) continue;
    const fields = line.slice(column).trim().split(/\s+/);
    const [apiVersion = "", namespaced = "", kind = ""] = [fields[0], fields.at(-2), fields.at(-1)];
    if (fields.length < 2 || (namespaced !== "true" && namespaced !== "false"))
      throw new InvalidApiResourcesError(
        `invalid NAMESPACED column value ${JSON.stringify(namespaced)} in line ${JSON.stringify(line.slice(column))}. ${rerun}`,
      );
    const parts = apiVersion.split("/");
    const group = parts.length === 2 ? (parts[0] ?? "") : "";
    // NAME, the first column, is the resource; only the scope matters offline.
    const resource = line.trim().split(/\s+/)[0] ?? kind.toLowerCase();
    scopes.set(`${group}/${kind}`, { resource, namespaced: namespaced === "true" });
  }
  return scopes;
}

/** `kindsFor(dir)`, or undefined once a broken file's KNV1064 is printed on `err` (nomos checks nothing else then). */
export async function kindsOrReport(dir: string, err: (line: string) => void): Promise<KindResolver | undefined> {
  try {
    return await kindsFor(dir);
  } catch (error) {
    if (!(error instanceof InvalidApiResourcesError)) throw error;
    err(knvErrorText(error.code, `${error.message} (${error.sourcePath})`));
    return undefined;
  }
}

function withScopes(scopes: Scopes): KindResolver {
  if (scopes.size === 0) return builtinKinds;
  return {
    resolveKind(apiVersion: string, kind: string): KindInfo | undefined | Promise<KindInfo | undefined> {
      const gv = splitApiVersion(apiVersion);
      const listed = gv === undefined ? undefined : scopes.get(`${gv.group}/${kind}`);
      if (gv === undefined || listed === undefined) return builtinKinds.resolveKind(apiVersion, kind);
      return { group: gv.group, version: gv.version, ...listed };
    },
  };
}
