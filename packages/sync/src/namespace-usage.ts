import { idKey } from "@driftless/applier";
import type { KubeClient } from "@driftless/kube";

interface DiscoveredResource {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
}

/** Objects every namespace gets from controllers; they do not make a namespace "in use". */
function isDefaultObject(resource: string, name: string): boolean {
  return (
    (resource === "serviceaccounts" && name === "default") || (resource === "configmaps" && name === "kube-root-ca.crt")
  );
}

const ignoredResources = new Set(["events", "bindings", "localsubjectaccessreviews", "leases"]);

/**
 * True when the namespace holds any object other than those this prune removed (and the defaults
 * controllers create, and objects already being deleted): such a namespace is not deleted with
 * them in it. Rare (only when a Namespace leaves Git), so it may afford a discovery round and one
 * small list per type. A list or discovery that fails throws: an unknown is never "empty".
 */
export async function namespaceInUse(
  client: KubeClient,
  namespace: string,
  removed: ReadonlySet<string>,
): Promise<boolean> {
  for (const { groupVersion, group, resources } of await discoverNamespaced(client)) {
    for (const resource of resources) {
      if (ignoredResources.has(resource.name) || !resource.verbs.includes("list")) continue;
      const base = group === "" ? `/api/${groupVersion}` : `/apis/${groupVersion}`;
      const path = `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.name}`;
      // Every page: a hundred objects being deleted ahead of one that stays must not read as "empty".
      for await (const item of pagedItems(client, path)) {
        const name = item.metadata?.name ?? "";
        if (isDefaultObject(resource.name, name) || item.metadata?.deletionTimestamp !== undefined) continue;
        if (removed.has(idKey({ group, kind: resource.kind, namespace, name }))) continue;
        return true;
      }
    }
  }
  return false;
}

interface ListedItem {
  readonly metadata?: { readonly name?: string; readonly deletionTimestamp?: string };
}

async function* pagedItems(client: KubeClient, path: string): AsyncGenerator<ListedItem> {
  let next: string | undefined;
  do {
    const list = await client.request<{ items?: ListedItem[]; metadata?: { continue?: string } }>({
      method: "GET",
      path,
      query: next === undefined ? { limit: 100 } : { limit: 100, continue: next },
    });
    yield* list.items ?? [];
    next = list.metadata?.continue === "" ? undefined : list.metadata?.continue;
  } while (next !== undefined);
}

async function discoverNamespaced(
  client: KubeClient,
): Promise<{ groupVersion: string; group: string; resources: DiscoveredResource[] }[]> {
  const out: { groupVersion: string; group: string; resources: DiscoveredResource[] }[] = [];
  const core = await client.request<{ resources?: DiscoveredResource[] }>({ method: "GET", path: "/api/v1" });
  out.push({
    groupVersion: "v1",
    group: "",
    resources: (core.resources ?? []).filter((r) => r.namespaced && !r.name.includes("/")),
  });
  const groups = await client.request<{ groups?: { name: string; preferredVersion?: { groupVersion: string } }[] }>({
    method: "GET",
    path: "/apis",
  });
  for (const group of groups.groups ?? []) {
    const groupVersion = group.preferredVersion?.groupVersion;
    if (groupVersion === undefined) continue;
    const list = await client.request<{ resources?: DiscoveredResource[] }>({
      method: "GET",
      path: `/apis/${groupVersion}`,
    });
    out.push({
      groupVersion,
      group: group.name,
      resources: (list.resources ?? []).filter((r) => r.namespaced && !r.name.includes("/")),
    });
  }
  return out;
}
