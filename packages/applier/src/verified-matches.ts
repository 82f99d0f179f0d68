import type { KubeObject } from "@driftless/kube";
import type { DesiredObject } from "./desired.ts";
import type { HealthStatus } from "./kstatus.ts";
import { idKey } from "./object-id.ts";

/**
 * Objects last found equal to their declaration, by object key: which declaration (the same
 * DesiredObject, which the reconciler keeps per commit) against which live resourceVersion. The
 * three-way match is a function of exactly those two (the last-applied record is part of the live
 * object), so while neither changed the answer is still "unchanged" and a resync skips the match,
 * the copy out of the cache and the garbage of both. Any write to the object changes its
 * resourceVersion, and any new declaration is a new object, so neither can be missed.
 */
export class VerifiedMatches {
  readonly #entries = new Map<
    string,
    { readonly desired: DesiredObject; readonly resourceVersion: string; readonly health: HealthStatus }
  >();
  /** Declarations whose write the server kept nothing of, by object key: warned about once. */
  readonly #keptNothing = new Map<string, DesiredObject>();

  lookup(desired: DesiredObject, resourceVersion: string | undefined): HealthStatus | undefined {
    if (resourceVersion === undefined) return undefined;
    const entry = this.#entries.get(idKey(desired.id));
    return entry?.desired === desired && entry.resourceVersion === resourceVersion ? entry.health : undefined;
  }

  record(desired: DesiredObject, live: KubeObject, health: HealthStatus): void {
    const resourceVersion = live.metadata.resourceVersion;
    if (resourceVersion === undefined) return;
    this.#entries.set(idKey(desired.id), { desired, resourceVersion, health });
  }

  /**
   * Records an answer the API server kept nothing of (apply-object.ts): while neither the declaration
   * nor the object changes, the write is not sent again. True the first time for this declaration.
   */
  recordKeptNothing(desired: DesiredObject, answer: KubeObject, health: HealthStatus): boolean {
    this.record(desired, answer, health);
    const key = idKey(desired.id);
    if (this.#keptNothing.get(key) === desired) return false;
    this.#keptNothing.set(key, desired);
    return true;
  }

  /**
   * Forgets the objects of `group`: a CRD of it changed its schema, and a match found equal under the old
   * one (a keyed list, say, made atomic since) says nothing of the new; the object itself did not change.
   */
  forgetGroup(group: string): void {
    for (const [key, entry] of this.#entries) if (entry.desired.id.group === group) this.#entries.delete(key);
  }

  /** Keeps only the objects still declared (after a pass), so the memo never outgrows the source. */
  retain(declared: readonly DesiredObject[]): void {
    const keep = new Set(declared.map((d) => idKey(d.id)));
    for (const key of this.#entries.keys()) if (!keep.has(key)) this.#entries.delete(key);
    for (const key of this.#keptNothing.keys()) if (!keep.has(key)) this.#keptNothing.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
