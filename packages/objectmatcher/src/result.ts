/**
 * The outcome of one match. Deciding "update or not" is the hot path of every reconcile pass, so
 * everything only needed when logging or sending an update (the patch, the normalised live object)
 * is computed on first access.
 */
import type { Change } from "./changes.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import type { KindInfo, PatchType } from "./kinds.ts";
import type { NormalizeContext } from "./normalize.ts";
import { normalizeObject } from "./normalize.ts";
import { buildPatch } from "./patch.ts";
import { redactSecretValues, renderResult } from "./render.ts";
import type { RenderOptions } from "./render.ts";
import type { ObjectRef } from "./errors.ts";

export interface PatchResultInit {
  readonly changes: readonly Change[];
  readonly kind: KindInfo;
  readonly identity: ObjectRef;
  readonly original: JsonObject | undefined;
  readonly modified: JsonObject;
  /** The live object as given; normalised lazily for `current`. */
  readonly liveObject: JsonObject;
  readonly normalize: NormalizeContext;
}

export class PatchResult {
  /** `strategic-merge` for built-in kinds, `merge` (RFC 7386) for everything else. */
  readonly patchType: PatchType;
  /** Every path that must change, in a stable order. Empty exactly when `isEmpty()`. */
  readonly changes: readonly Change[];
  /** What the matcher knew about the kind: built in or not, and its schema. */
  readonly kindInfo: KindInfo;
  /** Which object this is about, for logs. */
  readonly identity: ObjectRef;
  /** The normalised last-applied record (undefined when the live object has none); shared and frozen. */
  readonly original: JsonObject | undefined;
  /** The normalised declaration. */
  readonly modified: JsonObject;
  readonly #live: JsonObject;
  readonly #normalize: NormalizeContext;
  #patch: JsonObject | undefined;
  #current: JsonObject | undefined;

  constructor(init: PatchResultInit) {
    this.patchType = init.kind.patchType;
    this.changes = init.changes;
    this.kindInfo = init.kind;
    this.identity = init.identity;
    this.original = init.original;
    this.modified = init.modified;
    this.#live = init.liveObject;
    this.#normalize = init.normalize;
  }

  /** True when the live object already matches the declaration: no update is needed. */
  isEmpty(): boolean {
    return this.changes.length === 0;
  }

  /**
   * What would bring the live object to the declared state, as `patchType`; `{}` when `isEmpty()`.
   * It does not carry the last-applied record: whoever sends an update records it with
   * `Annotator.setLastAppliedAnnotation` on the declaration first.
   */
  get patch(): JsonObject {
    this.#patch ??= this.isEmpty() ? {} : buildPatch(this.changes, this.kindInfo, this.modified, this.#live);
    return this.#patch;
  }

  /** The normalised live object (server metadata, status and our annotation removed). */
  get current(): JsonObject {
    this.#current ??= normalizeObject(this.#live, this.#normalize);
    return this.#current;
  }

  /** Stable text for logs and `driftless diff`; Secret values are redacted. */
  render(options?: RenderOptions): string {
    return renderResult(this, options);
  }

  /** For structured logs: everything above, with Secret values redacted. */
  toJSON(): JsonObject {
    const secret = this.kindInfo.builtIn && this.kindInfo.group === "" && this.kindInfo.kind === "Secret";
    const safe = (value: JsonObject): JsonValue => (secret ? redactSecretValues(value) : value);
    const out: JsonObject = {
      patchType: this.patchType,
      patch: safe(this.patch),
      changes: this.render()
        .split("\n")
        .slice(1)
        .map((line) => line.trim()),
      modified: safe(this.modified),
      current: safe(this.current),
    };
    if (this.original) out["original"] = this.original;
    return out;
  }
}
