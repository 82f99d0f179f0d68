/**
 * Reading a sync's source, remembering what cannot have changed. A checkout never changes, so the
 * files of one commit and dir are read and declared once; both are redone only when discovery
 * answers differently for a kind the source uses. A full pass over an unchanged
 * commit (every resync) then allocates next to nothing for its source: at 10,000 objects re-reading
 * and re-declaring was most of an unchanged pass's time and garbage. A source with a `mode: dynamic`
 * NamespaceSelector is declared again when the cluster's Namespaces change what it selects.
 */
import type { SourceFormat } from "@driftless/api";
import type { FetchResult } from "@driftless/git";
import {
  declareObjects,
  readManifests,
  sourceFormatFor,
  usesDynamicNamespaceSelector,
  type KindInfo,
  type KindResolver,
  type LiveNamespace,
  type SourceResult,
  type SyncScope,
} from "@driftless/source";
import { namespacesDigest } from "./namespace-watch.ts";

export interface SourceCacheOptions {
  /** This cluster's name, for cluster selectors (Config Sync's `--cluster-name`). */
  readonly clusterName?: string;
  /** The cluster's Namespaces; asked only for a source with a dynamic NamespaceSelector. */
  readonly listNamespaces?: () => Promise<LiveNamespace[]>;
}

interface Declared {
  readonly commit: string;
  readonly sourceDir: string;
  readonly format: SourceFormat;
  /** Every (apiVersion, kind) the declaration asked about, and the answer, as one comparable string. */
  readonly kinds: string;
  readonly asked: readonly (readonly [apiVersion: string, kind: string])[];
  readonly result: SourceResult;
  /** The Namespaces a dynamic NamespaceSelector chose from (namespacesDigest); undefined without one. */
  readonly namespaces: string | undefined;
}

export class SourceCache {
  readonly #scope: SyncScope;
  readonly #kinds: KindResolver;
  readonly #options: SourceCacheOptions;
  #declared: Declared | undefined;

  constructor(scope: SyncScope, kinds: KindResolver, options: SourceCacheOptions = {}) {
    this.#scope = scope;
    this.#kinds = kinds;
    this.#options = options;
  }

  /** Whether the last source read has a dynamic NamespaceSelector (and so depends on the cluster's Namespaces). */
  get dynamicNamespaces(): boolean {
    return this.#declared?.namespaces !== undefined;
  }

  /** The last read succeeded without a dynamic NamespaceSelector: the cluster's Namespaces are not needed. */
  get staticNamespaces(): boolean {
    return this.#declared !== undefined && this.#declared.namespaces === undefined;
  }

  /** `format`: the sync's spec.sourceFormat, defaulted (a RepoSync's source is read as unstructured whatever it says). */
  async read(fetched: FetchResult, requested: SourceFormat, signal: AbortSignal): Promise<SourceResult> {
    const format = sourceFormatFor(this.#scope, requested);
    const last = this.#declared;
    if (
      last?.commit === fetched.commit &&
      last.sourceDir === fetched.sourceDir &&
      last.format === format &&
      (await this.#answers(last.asked)) === last.kinds &&
      (last.namespaces === undefined || namespacesDigest(await this.#listNamespaces()) === last.namespaces)
    )
      return last.result;

    // Only the declaration is kept, not the parsed files: when a kind's answer changes (a CRD came or
    // went), which is rare, the files are read again rather than held for it.
    this.#declared = undefined;
    // Symlinked files may lead anywhere in the checkout, as Config Sync follows them.
    const manifests = await readManifests(fetched.sourceDir, { signal, format, checkoutDir: fetched.dir });
    const asked: [string, string][] = [];
    // A RepoSync may not declare NamespaceSelectors (refused as out of scope), nor list Namespaces.
    const live =
      this.#scope.kind === "RootSync" && usesDynamicNamespaceSelector(manifests.manifests)
        ? await this.#listNamespaces()
        : undefined;
    const { clusterName } = this.#options;
    const result = await declareObjects(manifests, {
      scope: this.#scope,
      format,
      // A kind not served yet (its CRD elsewhere, or coming) holds back only its own objects, as in Config Sync.
      setAsideUnknownKinds: true,
      ...(clusterName === undefined ? {} : { clusterName }),
      ...(live === undefined ? {} : { liveNamespaces: live }),
      kinds: {
        resolveKind: (apiVersion, kind) => {
          asked.push([apiVersion, kind]);
          return this.#kinds.resolveKind(apiVersion, kind);
        },
      },
    });
    // A read with errors is not kept: an I/O failure may be transient.
    if (manifests.errors.length === 0) {
      const { commit, sourceDir } = fetched;
      const kinds = await this.#answers(asked);
      const namespaces = live === undefined ? undefined : namespacesDigest(live);
      this.#declared = { commit, sourceDir, format, asked, kinds, result, namespaces };
    }
    return result;
  }

  async #listNamespaces(): Promise<LiveNamespace[]> {
    return (await this.#options.listNamespaces?.()) ?? [];
  }

  async #answers(asked: readonly (readonly [string, string])[]): Promise<string> {
    const answers: (KindInfo | null)[] = [];
    for (const [apiVersion, kind] of asked) answers.push((await this.#kinds.resolveKind(apiVersion, kind)) ?? null);
    return JSON.stringify([asked, answers]);
  }
}
