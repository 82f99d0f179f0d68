/**
 * Reading a sync's source, remembering what cannot have changed. A checkout never changes, so the
 * files of one commit and dir are read and declared once; both are redone only when discovery
 * answers differently for a kind the source uses. A full pass over an unchanged
 * commit (every resync) then allocates next to nothing for its source: at 10,000 objects re-reading
 * and re-declaring was most of an unchanged pass's time and garbage.
 */
import type { SourceFormat } from "@driftless/api";
import type { FetchResult } from "@driftless/git";
import {
  declareObjects,
  readManifests,
  sourceFormatFor,
  type KindInfo,
  type KindResolver,
  type SourceResult,
  type SyncScope,
} from "@driftless/source";

interface Declared {
  readonly commit: string;
  readonly sourceDir: string;
  readonly format: SourceFormat;
  /** Every (apiVersion, kind) the declaration asked about, and the answer, as one comparable string. */
  readonly kinds: string;
  readonly asked: readonly (readonly [apiVersion: string, kind: string])[];
  readonly result: SourceResult;
}

export class SourceCache {
  readonly #scope: SyncScope;
  readonly #kinds: KindResolver;
  #declared: Declared | undefined;

  constructor(scope: SyncScope, kinds: KindResolver) {
    this.#scope = scope;
    this.#kinds = kinds;
  }

  /** `format`: the sync's spec.sourceFormat, defaulted (a RepoSync's source is read as unstructured whatever it says). */
  async read(fetched: FetchResult, requested: SourceFormat, signal: AbortSignal): Promise<SourceResult> {
    const format = sourceFormatFor(this.#scope, requested);
    const last = this.#declared;
    if (
      last?.commit === fetched.commit &&
      last.sourceDir === fetched.sourceDir &&
      last.format === format &&
      (await this.#answers(last.asked)) === last.kinds
    )
      return last.result;

    // Only the declaration is kept, not the parsed files: when a kind's answer changes (a CRD came or
    // went), which is rare, the files are read again rather than held for it.
    this.#declared = undefined;
    const manifests = await readManifests(fetched.sourceDir, { signal, format });
    const asked: [string, string][] = [];
    const result = await declareObjects(manifests, {
      scope: this.#scope,
      format,
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
      this.#declared = { commit, sourceDir, format, asked, kinds: await this.#answers(asked), result };
    }
    return result;
  }

  async #answers(asked: readonly (readonly [string, string])[]): Promise<string> {
    const answers: (KindInfo | null)[] = [];
    for (const [apiVersion, kind] of asked) answers.push((await this.#kinds.resolveKind(apiVersion, kind)) ?? null);
    return JSON.stringify([asked, answers]);
  }
}
