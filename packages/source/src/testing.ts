/** Helpers for this package's tests: throwaway directories under the OS temp dir. */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { KindInfo, KindResolver } from "./kinds.ts";

/** Runs `fn` with a fresh directory holding `files` (path → content), removed afterwards. */
export async function withTree<T>(
  files: Readonly<Record<string, string>>,
  fn: (dir: string) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-source-"));
  try {
    await writeTree(dir, files);
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function writeTree(dir: string, files: Readonly<Record<string, string>>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const file = join(dir, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

/** Built-in kinds the tests use, as discovery would report them. */
const builtins: Readonly<Record<string, KindInfo>> = {
  "v1/ConfigMap": { group: "", version: "v1", resource: "configmaps", namespaced: true },
  "v1/Secret": { group: "", version: "v1", resource: "secrets", namespaced: true },
  "v1/Namespace": { group: "", version: "v1", resource: "namespaces", namespaced: false },
  "apps/v1/Deployment": { group: "apps", version: "v1", resource: "deployments", namespaced: true },
  "rbac.authorization.k8s.io/v1/ClusterRole": {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    resource: "clusterroles",
    namespaced: false,
  },
  "apiextensions.k8s.io/v1/CustomResourceDefinition": {
    group: "apiextensions.k8s.io",
    version: "v1",
    resource: "customresourcedefinitions",
    namespaced: false,
  },
};

/** A resolver over `builtins` that counts its calls. */
export function fakeDiscovery(): KindResolver & { readonly calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    resolveKind(apiVersion: string, kind: string): KindInfo | undefined {
      calls.push(`${apiVersion}/${kind}`);
      return builtins[`${apiVersion}/${kind}`];
    },
  };
}

export function configMap(name: string, namespace?: string, data: Readonly<Record<string, string>> = {}): string {
  const ns = namespace === undefined ? "" : `\n  namespace: ${namespace}`;
  const entries = Object.entries(data)
    .map(([k, v]) => `\n  ${k}: "${v}"`)
    .join("");
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}${ns}\ndata:${entries || " {}"}\n`;
}
