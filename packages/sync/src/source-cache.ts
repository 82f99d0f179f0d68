/**
 * Reading a sync's source, remembering what cannot have changed. A checkout never changes, so the
 * files of one commit and dir are read once; declaring them against the cluster's kinds is redone
 * only when discovery answers differently for a kind the source uses. A full pass over an unchanged
 * commit (every resync) then allocates next to nothing for its source: at 10,000 objects re-reading
 * and re-declaring was most of an unchanged pass's time and garbage.
 */
import type { FetchResult } from "@driftless/git";
import {
  declareObjects,
  readManifests,
  type KindInfo,
  type KindResolver,
  type ManifestSet,
  type SourceResult,
  type SyncScope,
} from "@driftless/source";

interface Declared {
  readonly manifests: ManifestSet;
  /** Every (apiVersion, kind) the declaration asked about, and the answer, as one comparable string. */
  readonly kinds: string;
  readonly asked: readonly (readonly [apiVersion: string, kind: string])[];
  readonly result: SourceResult;
}

export class SourceCache {
  readonly #scope: SyncScope;
  readonly #kinds: KindResolver;
  #manifests: { readonly commit: string; readonly sourceDir: string; readonly set: ManifestSet } | undefined;
  #declared: Declared | undefined;

  constructor(scope: SyncScope, kinds: KindResolver) {
    this.#scope = scope;
    this.#kinds = kinds;
  }

  async read(fetched: FetchResult, signal: AbortSignal): Promise<SourceResult> {
    const manifests = await this.#readManifests(fetched, signal);
    const last = this.#declared;
    if (last?.manifests === manifests && (await this.#answers(last.asked)) === last.kinds) return last.result;

    const asked: [string, string][] = [];
    const result = await declareObjects(manifests, {
      scope: this.#scope,
      kinds: {
        resolveKind: (apiVersion, kind) => {
          asked.push([apiVersion, kind]);
          return this.#kinds.resolveKind(apiVersion, kind);
        },
      },
    });
    this.#declared = { manifests, asked, kinds: await this.#answers(asked), result };
    return result;
  }

  /** A read with errors is not kept: an I/O failure may be transient. */
  async #readManifests(fetched: FetchResult, signal: AbortSignal): Promise<ManifestSet> {
    const cached = this.#manifests;
    if (cached?.commit === fetched.commit && cached.sourceDir === fetched.sourceDir) return cached.set;
    this.#manifests = undefined;
    this.#declared = undefined;
    const set = await readManifests(fetched.sourceDir, { signal });
    if (set.errors.length === 0) this.#manifests = { commit: fetched.commit, sourceDir: fetched.sourceDir, set };
    return set;
  }

  async #answers(asked: readonly (readonly [string, string])[]): Promise<string> {
    const answers: (KindInfo | null)[] = [];
    for (const [apiVersion, kind] of asked) answers.push((await this.#kinds.resolveKind(apiVersion, kind)) ?? null);
    return JSON.stringify([asked, answers]);
  }
}
