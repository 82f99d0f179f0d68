/**
 * spec.helm.deployNamespace: every namespaced object the chart renders goes to that namespace, as
 * Config Sync's helm-sync does with kpt's set-namespace. Built-in kinds are placed by their known
 * scope; a custom kind is moved only when the chart gave it a namespace (its scope is unknown here).
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { builtinKinds } from "@driftless/source";

async function yamlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && /\.ya?ml$/.test(e.name)).map((e) => join(e.parentPath, e.name));
}

export async function setDeployNamespace(dir: string, namespace: string): Promise<void> {
  for (const file of await yamlFiles(dir)) {
    const docs = parseAllDocuments(await readFile(file, "utf8"));
    let changed = false;
    for (const doc of docs) {
      const object = doc.toJS() as { apiVersion?: unknown; kind?: unknown; metadata?: { namespace?: unknown } } | null;
      if (object === null || typeof object.apiVersion !== "string" || typeof object.kind !== "string") continue;
      const info = builtinKinds.resolveKind(object.apiVersion, object.kind) as { namespaced: boolean } | undefined;
      const namespaced = info === undefined ? object.metadata?.namespace !== undefined : info.namespaced;
      if (!namespaced) continue;
      doc.setIn(["metadata", "namespace"], namespace);
      changed = true;
    }
    if (changed) await writeFile(file, docs.map((d) => d.toString()).join("---\n"));
  }
}
