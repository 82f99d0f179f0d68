/**
 * Keeps the matcher's custom-resource schemas current, built from the CRD objects themselves
 * (`spec.versions[].schema.openAPIV3Schema`), which hold the merge keys the server applies. The
 * server's `/openapi/v3` document is built from the same schema about 1 s after a CRD is Established
 * or changed (docs/design/objectmatcher.md), so a match there could run on a missing or old schema
 * and treat a keyed list as atomic: a write that removes another manager's items.
 *
 * - A create needs no schema; a match of a live object does (`ensure`).
 * - A CRD this reconciler applied or waited for is handed over as read (`observe`): no request.
 * - A CRD another party changed or deleted is told by the CRD watch (`changed`): its schema is read
 *   again by the next match.
 * - Before a custom resource is written, `confirm` makes sure the schema is at least as new as the
 *   live object (resourceVersions are etcd revisions): a CRD change another party made just before
 *   it wrote the object, whose watch event has not arrived yet, is read with one LIST.
 *
 * A reconciler that may not read CRDs (403), and kinds no CRD defines (aggregated APIs), fall back to
 * the OpenAPI v3 documents (openapi-schemas.ts). One that may read CRDs but not watch them (`unwatched`)
 * reads a CRD's metadata before each match of its custom resources instead.
 */
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import {
  isForbidden,
  isNewerResourceVersion,
  isUnauthorized,
  type KubeClient,
  type KubeObject,
  type ResourceMapping,
  type RestMapper,
} from "@driftless/kube";
import { resolveKind, type CustomResourceSchemaRegistry } from "@driftless/objectmatcher";
import { OpenApiSchemaLoader, type SchemaLog } from "./openapi-schemas.ts";
import { crdMapping } from "./wait.ts";

export type { SchemaLog };

export interface CustomResourceSchemaLoaderOptions {
  readonly client: Pick<KubeClient, "request" | "list">;
  readonly registry: CustomResourceSchemaRegistry;
  /** For the OpenAPI fallback: its discovery refreshes tell it to read the index again. */
  readonly mapper?: Pick<RestMapper, "mappings">;
  readonly log?: SchemaLog;
}

/** What the registry holds from one CRD (by name), and up to which revision it is known current. */
interface CrdEntry {
  /** Undefined: no such CRD (the kind is served by an aggregated API, or the CRD is gone). */
  readonly uid: string | undefined;
  readonly generation: number | undefined;
  readonly resourceVersion: string | undefined;
  /** No CRD change up to this revision is unseen (a LIST's revision, or the CRD's own). */
  readonly currentAt: string | undefined;
  /** The CRD watch reported a change: read again before the next match. */
  stale: boolean;
}

/** The metadata of a CRD the watch reports; undefined when it was deleted. */
export interface CrdMeta {
  readonly uid?: string;
  readonly generation?: number;
}

/**
 * A custom resource's CRD could not be read: rather than match it on no schema (every list atomic,
 * which would remove others' items), the object waits for a later pass.
 */
export class CrdUnreadableError extends DriftlessError {
  constructor(name: string, kind: string, cause: unknown) {
    super({
      code: KnvCode.ApiServer,
      errorClass: ErrorClass.Retry,
      message: `cannot read CustomResourceDefinition ${name} for the schema of ${kind}: ${messageOf(cause)}; its custom resources are not matched until it can be read`,
      resources: [{ group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", name }],
      cause,
    });
  }
}

/** `<plural>.<group>`, the name every CRD must have. */
export function crdNameOf(mapping: Pick<ResourceMapping, "group" | "resource">): string {
  return `${mapping.resource}.${mapping.group}`;
}

export class CustomResourceSchemaLoader {
  readonly #options: CustomResourceSchemaLoaderOptions;
  readonly #openApi: OpenApiSchemaLoader;
  readonly #crds = new Map<string, CrdEntry>();
  /** CRD reads in flight; each resolves to its failure, or undefined. */
  readonly #loading = new Map<string, Promise<unknown>>();
  /** False once a CRD read was refused: every schema then comes from /openapi/v3. */
  #crdsReadable = true;
  /** False once the CRD watch was refused: nothing tells a CRD change, so each match checks its metadata. */
  #watched = true;
  /** CRD metadata reads in flight (`unwatched`), by name. */
  readonly #checking = new Map<string, Promise<void>>();

  constructor(options: CustomResourceSchemaLoaderOptions) {
    this.#options = options;
    this.#openApi = new OpenApiSchemaLoader({
      client: options.client,
      registry: options.registry,
      ...(options.mapper === undefined ? {} : { mapper: options.mapper }),
      ...(options.log === undefined ? {} : { log: options.log }),
    });
  }

  /** Whether a match of this kind may run now without a load (built in, or its schema current). */
  ready(mapping: ResourceMapping): boolean {
    if (resolveKind(apiVersionOf(mapping), mapping.kind).builtIn) return true;
    const entry = this.#crds.get(crdNameOf(mapping));
    return this.#crdsReadable && this.#watched && entry !== undefined && entry.uid !== undefined && !entry.stale;
  }

  /**
   * The CRD watch was refused while CRDs may still be read (RBAC granting get and list only): a schema read
   * once would otherwise be kept however its CRD changes, a keyed list compared whole or the reverse.
   */
  unwatched(): void {
    this.#watched = false;
  }

  /** Before a match of a live custom resource: the registry holds its CRD's current schema. */
  async ensure(mapping: ResourceMapping): Promise<void> {
    const apiVersion = apiVersionOf(mapping);
    if (resolveKind(apiVersion, mapping.kind).builtIn) return;
    const name = crdNameOf(mapping);
    if (this.#crdsReadable && !this.#watched && this.#crds.get(name)?.stale === false) await this.#check(name);
    const entry = this.#crds.get(name);
    if (this.#crdsReadable && (entry === undefined || entry.stale)) {
      const failed = await this.#load(name);
      // A stale schema read before is kept (a write confirms it first); none at all is not guessed.
      if (failed !== undefined && this.#crdsReadable && this.#crds.get(name) === undefined)
        throw new CrdUnreadableError(name, mapping.kind, failed);
    }
    if (!this.#crdsReadable || this.#crds.get(name)?.uid === undefined)
      await this.#openApi.ensure(apiVersion, mapping.kind);
  }

  /**
   * Before writing a custom resource whose live copy is at `liveResourceVersion`: reads its CRD again
   * if a change to it could be newer than what the registry holds. True when the schema changed, and
   * the match must run again. Throws CrdUnreadableError when the CRD cannot be read: no write then.
   */
  async confirm(mapping: ResourceMapping, liveResourceVersion: string | undefined): Promise<boolean> {
    if (!this.#crdsReadable || resolveKind(apiVersionOf(mapping), mapping.kind).builtIn) return false;
    const name = crdNameOf(mapping);
    const before = this.#crds.get(name);
    if (before !== undefined && !before.stale && covers(before.currentAt, liveResourceVersion)) return false;
    let failed = await this.#load(name);
    // A load already in flight may have listed before this object was written: once more then.
    if (!covers(this.#crds.get(name)?.currentAt, liveResourceVersion)) failed = await this.#load(name);
    if (!this.#crdsReadable) return false;
    if (failed !== undefined) throw new CrdUnreadableError(name, mapping.kind, failed);
    const after = this.#crds.get(name);
    return after?.uid !== before?.uid || after?.resourceVersion !== before?.resourceVersion;
  }

  /** A CRD this reconciler wrote or read (the applier's Established wait): its schema, at once. */
  observe(crd: KubeObject): void {
    const name = crd.metadata.name;
    const known = this.#crds.get(name);
    const version = crd.metadata.resourceVersion;
    // An older copy (a slower read) must not replace a newer one.
    if (
      known?.uid === crd.metadata.uid &&
      known?.resourceVersion !== undefined &&
      !isNewerResourceVersion(version, known.resourceVersion)
    )
      return;
    this.#set(name, crd, version);
  }

  /** The CRD watch saw `name` change (meta) or go (undefined); true when the schema held for it no longer stands. */
  changed(name: string, meta: CrdMeta | undefined): boolean {
    const entry = this.#crds.get(name);
    if (entry === undefined) return false;
    if (meta === undefined) {
      this.#options.registry.setCustomResourceDefinition(name, undefined);
      this.#crds.delete(name);
      return true;
    }
    // Status-only updates (conditions, stored versions) keep uid and generation: nothing to read.
    if (meta.uid === entry.uid && meta.generation === entry.generation) return false;
    entry.stale = true;
    return true;
  }

  /** What the CRD watch would tell, read now: the CRD's uid and generation (one metadata LIST, deduplicated). */
  #check(name: string): Promise<void> {
    let checking = this.#checking.get(name);
    if (checking === undefined) {
      checking = this.#options.client
        .list(crdMapping, { fieldSelector: `metadata.name=${name}`, metadataOnly: true })
        .then(
          (list) => {
            const crd = list.items[0];
            const generation = crd?.metadata.generation;
            this.changed(
              name,
              crd === undefined
                ? undefined
                : {
                    ...(crd.metadata.uid === undefined ? {} : { uid: crd.metadata.uid }),
                    ...(typeof generation === "number" ? { generation } : {}),
                  },
            );
          },
          // Unreadable now: the schema read before stands (a write still confirms it first).
          (error: unknown) =>
            this.#options.log?.debug("custom resource schemas: CRD metadata unreadable", {
              crd: name,
              error: messageOf(error),
            }),
        )
        .finally(() => this.#checking.delete(name));
      this.#checking.set(name, checking);
    }
    return checking;
  }

  #set(name: string, crd: KubeObject | undefined, currentAt: string | undefined): void {
    const kinds = this.#options.registry.setCustomResourceDefinition(name, crd);
    const generation = crd?.metadata.generation;
    this.#crds.set(name, {
      uid: crd?.metadata.uid,
      generation: typeof generation === "number" ? generation : undefined,
      resourceVersion: crd?.metadata.resourceVersion,
      currentAt,
      stale: false,
    });
    if (crd !== undefined) this.#options.log?.debug("custom resource schemas: read from the CRD", { crd: name, kinds });
  }

  /** One LIST by name (deduplicated): the CRD and the revision it is current at; resolves to a failure. */
  #load(name: string): Promise<unknown> {
    let loading = this.#loading.get(name);
    if (loading === undefined) {
      loading = this.#read(name).finally(() => this.#loading.delete(name));
      this.#loading.set(name, loading);
    }
    return loading;
  }

  async #read(name: string): Promise<unknown> {
    try {
      // A LIST (not a GET) answers with the store's current revision: every change up to it is in it.
      const list = await this.#options.client.list(crdMapping, { fieldSelector: `metadata.name=${name}` });
      this.#set(name, list.items[0], list.resourceVersion);
      return undefined;
    } catch (error) {
      if (isForbidden(error) || isUnauthorized(error)) {
        this.#crdsReadable = false;
        this.#options.log?.debug("custom resource schemas: CRDs not readable; reading /openapi/v3 instead", {
          error: messageOf(error),
        });
        return undefined;
      }
      // A transient failure keeps what was known; the caller decides whether that will do.
      this.#options.log?.debug("custom resource schemas: CRD unreadable", { crd: name, error: messageOf(error) });
      return error;
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function apiVersionOf(mapping: Pick<ResourceMapping, "group" | "version">): string {
  return mapping.group === "" ? mapping.version : `${mapping.group}/${mapping.version}`;
}

/** No change newer than `currentAt` can be older than the live object: the schema is current for it. */
function covers(currentAt: string | undefined, liveResourceVersion: string | undefined): boolean {
  if (liveResourceVersion === undefined) return true;
  return currentAt !== undefined && isNewerResourceVersion(currentAt, liveResourceVersion);
}
