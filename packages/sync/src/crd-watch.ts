/**
 * The cluster's CRDs, metadata only (a CRD's schema can be hundreds of KiB; its generation says when
 * the spec changed), from the first custom resource type the sync watches (a sync of built-in kinds
 * only opens no CRD watch): a CRD another party changes makes its custom resources' schema stale, so the
 * next match reads it again; a CRD deleted ends the watch of its kinds at once, instead of retrying a
 * 404 every backoff step. A reconciler refused the CRD watch goes without: its schemas come from
 * /openapi/v3, or from CRDs it may read but not watch, checked before each match (cr-schemas.ts), and a
 * deleted kind's watch ends on its 404 (live-cache.ts).
 */
import { crdMapping, type CrdMeta } from "@driftless/applier";
import { Informer, isForbidden, isUnauthorized, type KubeClient, type KubeObject } from "@driftless/kube";
import type { Logger } from "./log.ts";

export interface CrdWatchHandlers {
  /** A CRD was added or its metadata changed (meta), or it was deleted (undefined). */
  readonly changed: (name: string, meta: CrdMeta | undefined) => void;
  /** A CRD was deleted: `<resource>.<group>` no longer exists. */
  readonly deleted: (group: string, resource: string) => void;
  /** The watch was refused (403/401): nothing will tell a CRD change from now on. */
  readonly refused: () => void;
}

export class CrdWatch {
  readonly #client: KubeClient;
  readonly #handlers: CrdWatchHandlers;
  readonly #log: Logger;
  #informer: Informer | undefined;
  /** Refused once (403/401): not tried again for every new custom resource type. */
  #refused = false;

  constructor(client: KubeClient, handlers: CrdWatchHandlers, log: Logger) {
    this.#client = client;
    this.#handlers = handlers;
    this.#log = log;
  }

  /** Whether the watch runs (started, and neither stopped nor refused since). */
  get watching(): boolean {
    return this.#informer !== undefined;
  }

  /** Starts watching, once; started when the sync first watches a custom resource type, again after a stop. */
  start(): void {
    if (this.#informer !== undefined || this.#refused) return;
    const informer = new Informer(this.#client, crdMapping, {
      metadataOnly: true,
      // managedFields of a CRD written by server-side apply name every field of its schema.
      transform: (obj) => ({ ...obj, metadata: { ...obj.metadata, managedFields: undefined } }),
      onError: (error) => {
        if (isForbidden(error) || isUnauthorized(error)) {
          this.#log.info(
            "CRD watch not permitted: a match reads its CRD's metadata first, or /openapi/v3 where CRDs cannot be read",
            {
              error: error.message,
            },
          );
          this.#refused = true;
          this.#handlers.refused();
          void this.stop();
          return;
        }
        this.#log.warn("CRD watch: list or watch failed; retrying", { error: error.message });
      },
    });
    const changed = (obj: KubeObject): void => this.#handlers.changed(obj.metadata.name, metaOf(obj));
    informer.on("add", changed);
    informer.on("update", changed);
    informer.on("delete", (obj) => {
      this.#handlers.changed(obj.metadata.name, undefined);
      const served = crdServes(obj.metadata.name);
      if (served !== undefined) this.#handlers.deleted(served.group, served.resource);
    });
    informer.start();
    this.#informer = informer;
    this.#log.debug("watching CRDs (metadata): the sync manages custom resources", {});
  }

  async stop(): Promise<void> {
    const informer = this.#informer;
    this.#informer = undefined;
    await informer?.stop();
  }
}

/** The group and resource a CRD's name (`<resource>.<group>`) says it serves. */
export function crdServes(name: string): { readonly group: string; readonly resource: string } | undefined {
  const dot = name.indexOf(".");
  return dot > 0 ? { group: name.slice(dot + 1), resource: name.slice(0, dot) } : undefined;
}

function metaOf(obj: KubeObject): CrdMeta {
  const generation = obj.metadata.generation;
  return {
    ...(obj.metadata.uid === undefined ? {} : { uid: obj.metadata.uid }),
    ...(typeof generation === "number" ? { generation } : {}),
  };
}
