/**
 * The watches behind the ResourceGroup status controller: one cluster-wide informer per kind some
 * ResourceGroup lists, shared by every group listing it and stopped once none does (Config Sync's
 * resource-group-controller keeps one watch per listed GVK the same way). A kind no API serves, or whose
 * watch answered 404 (its CRD deleted), reads as NotFound and is not watched again until a
 * CustomResourceDefinition event names it: a removed CRD costs no retry loop.
 */
import { apiVersionOf, Informer, type KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import type { RestMapper } from "@driftless/kube";
import type { Logger } from "@driftless/sync";
import { Resource } from "../resources.ts";
import { subgroupKind, type ListedObject, type LiveRead } from "./group-status.ts";

/** How long a read waits for a new watch's first list before answering Unknown (a later list recomputes). */
const defaultFirstListWaitMs = 5_000;
/**
 * A kind found unserved by discovery is looked up again, at a group's next computation, once this long has
 * passed even without a CRD event (an aggregated API has none).
 */
const absentRecheckMs = 60_000;

/** Kinds whose kstatus reads nothing but metadata: cached as metadata only, so Secret data never enters the manager. */
const metadataOnlyKinds = new Set(["/Secret", "/ConfigMap"]);

export interface KindWatchesOptions {
  readonly client: KubeClient;
  readonly mapper: RestMapper;
  readonly log: Logger;
  /** An object of a watched kind changed (added, updated, deleted). */
  readonly onObject: (group: string, kind: string, namespace: string, name: string) => void;
  /** What a kind reads as may have changed wholesale: its first list, its watch gone, its CRD changed. */
  readonly onKind: (group: string, kind: string) => void;
  readonly firstListWaitMs?: number;
}

interface KindWatch {
  readonly informer: Informer;
  readonly mapping: ResourceMapping;
}

export class KindWatches {
  readonly #o: KindWatchesOptions;
  /** "group/kind" → its watch (or the lookup starting it). */
  readonly #watches = new Map<string, Promise<KindWatch | undefined>>();
  /** "group/kind" → when it was found unserved. */
  readonly #absent = new Map<string, number>();
  /** "group/kind" → the users (ResourceGroups) listing it. */
  readonly #users = new Map<string, Set<string>>();
  readonly #crds: Informer;
  #stopped = false;

  constructor(options: KindWatchesOptions) {
    this.#o = options;
    // Only which kind a CRD serves, at which scope and versions, is kept: a CRD's schema is most of its size.
    this.#crds = new Informer(options.client, Resource.CustomResourceDefinition, {
      transform: (crd) => {
        const spec = (crd["spec"] ?? {}) as { group?: unknown; names?: { kind?: unknown } };
        return {
          ...crd,
          // With its resourceVersion, so a relist announces only the CRDs that changed.
          metadata: { name: crd.metadata.name, uid: crd.metadata.uid, resourceVersion: crd.metadata.resourceVersion },
          spec: { group: spec.group, names: { kind: spec.names?.kind }, served: servedAs(crd) },
        };
      },
      onError: (error) =>
        options.log.debug("ResourceGroup status: CRD watch failed; retrying", { error: error.message }),
    });
    const onCrd = (crd: KubeObject, reshaped: boolean): void => {
      const spec = crd["spec"] as { group?: unknown; names?: { kind?: unknown } };
      if (typeof spec.group !== "string" || typeof spec.names?.kind !== "string") return;
      this.#kindChanged(spec.group, spec.names.kind, reshaped);
    };
    // Created, deleted, or served otherwise (its uid, scope or versions): a watch made before reads the wrong path.
    // The first list's CRDs were there before any watch of ours: nothing to restart for them.
    this.#crds.on("add", (crd) => onCrd(crd, this.#crds.hasSynced));
    this.#crds.on("delete", (crd) => onCrd(crd, true));
    this.#crds.on("update", (crd, old) =>
      onCrd(
        crd,
        old === undefined ||
          crd.metadata.uid !== old.metadata.uid ||
          JSON.stringify(crd["spec"]) !== JSON.stringify(old["spec"]),
      ),
    );
  }

  start(): void {
    this.#crds.start();
  }

  /** `user` now lists exactly `objects`: kinds it no longer lists lose it, and a kind no one lists stops being watched. */
  use(user: string, objects: readonly ListedObject[]): void {
    const kinds = new Set(objects.map((o) => kindKey(o.group, o.kind)));
    for (const [kind, users] of this.#users) {
      if (kinds.has(kind) || !users.delete(user) || users.size > 0) continue;
      this.#users.delete(kind);
      this.#stopWatch(kind);
      // Its CRD may come while no one lists it, and #kindChanged ignores unlisted kinds: a later user looks it up afresh.
      this.#absent.delete(kind);
    }
    for (const kind of kinds) {
      const users = this.#users.get(kind) ?? new Set<string>();
      users.add(user);
      this.#users.set(kind, users);
    }
  }

  /** What the cluster holds of `object`, from its kind's watch (started on first need). */
  async read(object: ListedObject): Promise<LiveRead> {
    const watch = await this.#watchOf(object.group, object.kind);
    if (watch === undefined) return { state: "absent" };
    const { informer, mapping } = watch;
    if (!informer.hasSynced) await firstList(informer, this.#o.firstListWaitMs ?? defaultFirstListWaitMs);
    if (!informer.hasSynced) {
      // Gone meanwhile (a 404 ended it): the kind is not served.
      if (!this.#watches.has(kindKey(object.group, object.kind))) return { state: "absent" };
      return { state: "unreadable", why: informer.lastError?.message ?? `${mapping.resource} not listed yet` };
    }
    const found = informer.get(mapping.namespaced ? object.namespace : undefined, object.name);
    return found === undefined ? { state: "absent" } : { state: "found", object: found };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const watches = await Promise.all(this.#watches.values());
    this.#watches.clear();
    await Promise.all([this.#crds.stop(), ...watches.map((w) => w?.informer.stop())]);
  }

  #watchOf(group: string, kind: string): Promise<KindWatch | undefined> {
    const key = kindKey(group, kind);
    const absentSince = this.#absent.get(key);
    if (absentSince !== undefined && Date.now() - absentSince < absentRecheckMs) return Promise.resolve(undefined);
    let watch = this.#watches.get(key);
    if (watch === undefined) {
      watch = this.#startWatch(group, kind);
      this.#watches.set(key, watch);
    }
    return watch;
  }

  async #startWatch(group: string, kind: string): Promise<KindWatch | undefined> {
    const key = kindKey(group, kind);
    const mapping = await this.#o.mapper.mappingForGroupKind(group, kind).catch((error: unknown) => {
      this.#o.log.warn("ResourceGroup status: discovery failed", { kind: key, error: String(error) });
      return undefined;
    });
    if (mapping === undefined || this.#stopped) {
      this.#watches.delete(key);
      if (mapping === undefined) this.#absent.set(key, Date.now());
      return undefined;
    }
    this.#absent.delete(key);
    const metadataOnly = metadataOnlyKinds.has(key);
    let warned = false;
    const informer = new Informer(this.#o.client, mapping, {
      ...(metadataOnly ? { metadataOnly: true } : {}),
      transform: (obj) => trimmed(obj, mapping, metadataOnly),
      onError: (error) => {
        // A forbidden read says so once; its entries read Unknown until the list succeeds.
        this.#o.log[warned ? "debug" : "warn"]("ResourceGroup status: watch failed; retrying", {
          resource: mapping.resource,
          error: error.message,
        });
        warned = true;
      },
      onNotFound: () => {
        if (this.#stopped) return;
        this.#watches.delete(key);
        this.#absent.set(key, Date.now());
        this.#o.onKind(group, kind);
      },
    });
    const onObject = (obj: KubeObject): void =>
      this.#o.onObject(group, kind, obj.metadata.namespace ?? "", obj.metadata.name);
    for (const event of ["add", "update", "delete"] as const) informer.on(event, onObject);
    informer.synced().then(
      () => this.#o.onKind(group, kind),
      () => undefined, // stopped, or its kind gone (onNotFound said so)
    );
    informer.start();
    return { informer, mapping };
  }

  #stopWatch(key: string): void {
    const watch = this.#watches.get(key);
    this.#watches.delete(key);
    void watch?.then((w) => w?.informer.stop());
  }

  /**
   * A CRD of the kind came, changed or went: look it up again, and have its users recomputed. `reshaped`: its
   * watch goes too, so the next read starts one at the kind's mapping now; the old one's 404, which may come
   * after this event, would otherwise leave the kind NotFound with no later event to look again.
   */
  #kindChanged(group: string, kind: string, reshaped: boolean): void {
    const key = kindKey(group, kind);
    // Cleared even for a kind no one lists now: a read finishing after its last user left may have set it.
    this.#absent.delete(key);
    if (!this.#users.has(key)) return;
    this.#o.mapper.invalidate();
    if (reshaped) this.#stopWatch(key);
    this.#o.onKind(group, kind);
  }
}

/** The scope and served versions of a CRD: what a watch of its kind depends on. */
function servedAs(crd: KubeObject): { readonly scope: unknown; readonly versions: readonly string[] } {
  const spec = (crd["spec"] ?? {}) as { scope?: unknown; versions?: unknown };
  const versions = Array.isArray(spec.versions) ? (spec.versions as { name?: unknown; served?: unknown }[]) : [];
  return {
    scope: spec.scope,
    versions: versions.flatMap((v) => (v.served === true && typeof v.name === "string" ? [v.name] : [])),
  };
}

function kindKey(group: string, kind: string): string {
  return `${group}/${kind}`;
}

/**
 * What kstatus reads of an object, without managedFields; a metadata-only copy named as its kind. A
 * ResourceGroup (a subgroup) is read by its generation and conditions alone: without its spec and per-object
 * statuses, since this watch holds every group in the cluster, a reconciler's megabytes of inventory too.
 */
export function trimmed(obj: KubeObject, mapping: ResourceMapping, metadataOnly: boolean): KubeObject {
  const { managedFields: _managed, ...metadata } = obj.metadata as KubeObject["metadata"] & { managedFields?: unknown };
  const kindOf = metadataOnly ? { apiVersion: apiVersionOf(mapping.group, mapping.version), kind: mapping.kind } : {};
  const copy: KubeObject = { ...obj, ...kindOf, metadata };
  if (mapping.group !== subgroupKind.group || mapping.kind !== subgroupKind.kind) return copy;
  const { spec: _spec, status, ...rest } = copy;
  if (typeof status !== "object" || status === null) return rest as KubeObject;
  const { resourceStatuses: _resources, subgroupStatuses: _subgroups, ...kept } = status as Record<string, unknown>;
  return { ...rest, status: kept } as KubeObject;
}

async function firstList(informer: Informer, waitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    informer.synced().catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs))),
  ]);
  clearTimeout(timer);
}
