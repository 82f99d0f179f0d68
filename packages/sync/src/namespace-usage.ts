import { idKey, mapLimit } from "@driftless/applier";
import { discover, type KubeClient, type ResourceMapping } from "@driftless/kube";

/** Objects every namespace gets from controllers; they do not make a namespace "in use". */
function isDefaultObject(resource: string, name: string): boolean {
  return (
    (resource === "serviceaccounts" && name === "default") || (resource === "configmaps" && name === "kube-root-ca.crt")
  );
}

const ignoredResources = new Set(["events", "bindings", "localsubjectaccessreviews", "leases"]);

/**
 * Lists in flight at once. A cluster may serve hundreds of custom resource types, and an empty namespace
 * is only known to be empty once each is listed: one after another, that took over 20 s on a loaded API server.
 */
const listConcurrency = 8;

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
  const types = await listableNamespacedTypes(client);
  let inUse = false;
  await mapLimit(types, listConcurrency, async (type) => {
    if (!inUse && (await holdsObject(client, namespace, type, removed))) inUse = true;
  });
  return inUse;
}

async function holdsObject(
  client: KubeClient,
  namespace: string,
  type: ResourceMapping,
  removed: ReadonlySet<string>,
): Promise<boolean> {
  const base = type.group === "" ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const path = `${base}/namespaces/${encodeURIComponent(namespace)}/${type.resource}`;
  // Every page: a hundred objects being deleted ahead of one that stays must not read as "empty".
  for await (const item of pagedItems(client, path)) {
    const name = item.metadata?.name ?? "";
    if (isDefaultObject(type.resource, name) || item.metadata?.deletionTimestamp !== undefined) continue;
    if (removed.has(idKey({ group: type.group, kind: type.kind, namespace, name }))) continue;
    return true;
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

/** Each group's namespaced types at its preferred version, in two requests where the server aggregates discovery. */
async function listableNamespacedTypes(client: KubeClient): Promise<ResourceMapping[]> {
  const discovery = await discover(client);
  // A group that could not be read may hold anything.
  if (discovery.failed.length > 0)
    throw new Error(`discovery could not read ${discovery.failed.join(", ")}: the namespace's contents are unknown`);
  return discovery.groups.flatMap((group) => {
    const preferred = group.versions[0];
    return group.resources.filter(
      (r) => r.version === preferred && r.namespaced && r.verbs.includes("list") && !ignoredResources.has(r.resource),
    );
  });
}
