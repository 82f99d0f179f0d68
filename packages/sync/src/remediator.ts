import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import {
  type ApplyOutcome,
  comparisonCandidate,
  conflictingManager,
  type CustomResourceSchemaLoader,
  declaredResource,
  decorate,
  describeId,
  idKey,
  isManagementDisabled,
  mutationIgnored,
  restoreRecord,
  strayMutationAnnotation,
  withDeclaredMetadata,
  type DesiredObject,
  type SyncIdentity,
} from "@driftless/applier";
import type { KubeObject, ResourceMapping } from "@driftless/kube";
import { splitApiVersion } from "@driftless/source";
import type { Annotator, PatchMaker } from "@driftless/objectmatcher";
import type { InformerLiveState } from "./live-cache.ts";
import type { Logger } from "./log.ts";
import { idOf, UndeclaredClaims, type Seen } from "./undeclared-claims.ts";

/** Another writer keeps changing an object we manage (KNV2005): reported instead of fought forever. */
export class FightError extends DriftlessError {
  constructor(desired: DesiredObject, corrections: number, windowMs: number) {
    super({
      code: KnvCode.Fight,
      errorClass: ErrorClass.Stalled,
      // Config Sync's KNV2005 sentences word for word (its e2e tests and users match on them), then driftless's pause.
      message:
        `detected excessive object updates, approximately ${perMinute(corrections, windowMs)} times per minute. ` +
        "This may indicate Config Sync is fighting with another controller over the object. " +
        `driftless has paused correcting ${describeId(desired.id)} for ${Math.round(windowMs / 1000)} s: find the other controller and stop one of the two.`,
      resources: [declaredResource(desired)],
    });
  }
}

/** Corrections in the window as a rate per minute, as Config Sync's fight detector states its frequency. */
function perMinute(corrections: number, windowMs: number): number {
  return Math.round((corrections * 60_000) / windowMs);
}

/** What re-applying one drifted object did. */
export const Correction = {
  /** Written: the object is its declaration again. Only these count toward a fight (as Config Sync's). */
  Written: "written",
  /** Already equal to its declaration: nothing was written. */
  Unchanged: "unchanged",
  /** The API server refuses the declaration (a terminal error): the same write would fail again. */
  Refused: "refused",
  /** Not done now (a retryable failure, or a pass under way): a full pass will see to it. */
  Deferred: "deferred",
} as const;
export type Correction = (typeof Correction)[keyof typeof Correction];

export interface RemediatorOptions {
  readonly live: InformerLiveState;
  readonly sync: SyncIdentity;
  readonly matcher: PatchMaker;
  /** Custom resources' schemas: a change is matched only once its CRD's current schema is read. */
  readonly schemas?: Pick<CustomResourceSchemaLoader, "ready" | "ensure">;
  /** Restores records the live state keeps as digests (see @driftless/applier's record-digest). */
  readonly annotator: Annotator;
  readonly log: Logger;
  /** Asks for a drift pass (de-duplicated by the queue): the fallback when a correction fails. */
  readonly requestPass: (reason: string) => void;
  /**
   * Re-applies one drifted object at once (the last synced commit's declaration). Refused and Deferred
   * ask for a full pass, which reports the error.
   */
  readonly correct?: (desired: DesiredObject) => Promise<Correction>;
  /**
   * A fight shows: when it is detected, and at each drift another writer makes while correction is paused
   * (resource_fights_total counts both, as Config Sync's remediator counts each correction during a fight).
   */
  readonly onFight?: (error: FightError) => void;
  /**
   * True while a pass may be changing the declarations (applying another commit): a change seen
   * then may be that pass's own write, or concern an object only the new commit declares. It is
   * noted and checked against the declaration the pass leaves behind, when it ends
   * (`recheckChangesDuringPass`), never against the previous one.
   */
  readonly declarationsChanging?: () => boolean;
  /** Corrections of one object within the window that count as a fight. */
  readonly fightThreshold?: number;
  readonly fightWindowMs?: number;
}

/**
 * Watches the objects the last pass declared. A change that makes a live object differ from its
 * declaration, or a deletion, is corrected at once by re-applying that object alone (a full pass
 * over 10,000 objects takes seconds; one object takes milliseconds); our own writes match and are
 * ignored. A correction that fails falls back to a drift pass. A labelled object that claims this
 * sync but is not declared is deleted or released, as Config Sync's remediator (undeclared-claims.ts).
 */
export class Remediator {
  private readonly options: RemediatorOptions;
  private declared = new Map<string, DesiredObject>();
  private readonly corrections = new Map<string, number[]>();
  private readonly paused = new Map<string, number>();
  /** When each pause ends: a pass then corrects the object and clears KNV2005 (see `pause`). */
  private readonly pauseEnds = new Map<string, NodeJS.Timeout>();
  private readonly unsubscribe: () => void;
  private readonly fights = new Map<string, FightError>();
  /** Objects a reconciler with precedence holds (KNV1060): reported by a pass, never corrected. */
  private readonly conflicts = new Set<string>();
  /**
   * Declarations the API server refused at a correction: until the declaration changes or the server
   * takes it again (a pass or a correction writes it), further changes to the object (its status,
   * someone's label) are not tried again, each a certain refusal and a full pass; the pass that reported
   * the refusal keeps it on status. A deletion still is.
   */
  private readonly refused = new Map<string, DesiredObject>();
  /** Objects being corrected now, and whether another change arrived meanwhile. */
  private readonly inFlight = new Map<string, boolean>();
  /**
   * Objects that changed while a pass applied another commit, to check when it ends: by object and
   * watched version. Both watches of a kind whose objects are declared at two versions see each
   * change, in either order; one entry per object kept the last, which could be the ignored version.
   */
  private readonly changedDuringPass = new Map<string, Seen & { readonly key: string; readonly claims: boolean }>();
  /** Set by the first declaration: until then no object is known to be undeclared. */
  private declarationKnown = false;
  /** Undeclared objects that claim this sync. */
  private readonly undeclared: UndeclaredClaims;

  constructor(options: RemediatorOptions) {
    this.options = options;
    this.undeclared = new UndeclaredClaims({
      client: () => options.live.client,
      sync: options.sync,
      lastAppliedAnnotation: options.annotator.annotationKey,
      log: options.log,
      declared: (key) => (this.declarationKnown ? this.declared.has(key) : undefined),
      declarationsChanging: () => options.declarationsChanging?.() === true,
    });
    const unsubscribeEvents = options.live.onEvent((event, mapping, object) => this.onEvent(event, mapping, object));
    // Objects left out of the watch cache as undeclared: only a claim of this sync concerns us.
    const unsubscribeUndeclared = options.live.onUndeclared((mapping, object) =>
      this.onEvent("update", mapping, object),
    );
    this.unsubscribe = () => {
      unsubscribeEvents();
      unsubscribeUndeclared();
    };
  }

  /** The set of objects to guard, after each pass. */
  setDeclared(objects: readonly DesiredObject[]): void {
    // Known from the first declaration on, an empty one included (before the shortcut below keeps the index).
    this.declarationKnown = true;
    // A resync declares the very same objects again (the source is cached per commit): keep the index.
    if (objects.length === this.declared.size) {
      let index = 0;
      let same = true;
      for (const current of this.declared.values()) {
        if (current !== objects[index++]) {
          same = false;
          break;
        }
      }
      if (same) return;
    }
    this.declared = new Map(objects.map((o) => [idKey(o.id), o]));
    this.refused.clear();
  }

  /**
   * What a pass applied: a declaration it wrote or found in place is no longer held as refused. A refusal can
   * pass by itself (a create refused while its CRD was being deleted and created again), and a resync keeps the
   * same declarations, so without this the object's drift went uncorrected until the next commit.
   */
  passApplied(outcomes: readonly ApplyOutcome[]): void {
    if (this.refused.size === 0) return;
    for (const { desired, error } of outcomes) if (error === undefined) this.refused.delete(idKey(desired.id));
  }

  /**
   * Fights in progress: objects whose correction is paused, with the error to report. A pass leaves
   * them alone and reports KNV2005 until the pause ends, so two controllers never loop.
   */
  activeFights(): Map<string, FightError> {
    const now = Date.now();
    const active = new Map<string, FightError>();
    for (const [key, until] of this.paused) {
      const fight = this.fights.get(key);
      if (until > now && fight !== undefined) active.set(key, fight);
      else {
        this.paused.delete(key);
        this.fights.delete(key);
      }
    }
    return active;
  }

  stop(): void {
    this.unsubscribe();
    for (const timer of this.pauseEnds.values()) clearTimeout(timer);
    this.pauseEnds.clear();
  }

  /**
   * After a pass: the objects that changed while it applied another commit, checked against what is
   * declared now (the new commit's declaration when the pass got that far). Without this, a change
   * to an object the new commit declares for the first time, made while the pass ran, would wait
   * for the next resync.
   */
  recheckChangesDuringPass(): void {
    const changed = [...this.changedDuringPass.values()];
    this.changedDuringPass.clear();
    // Claims still waiting (a suspended sync, a Namespace in use): the pass may have changed that.
    this.undeclared.retryWaiting(new Set(changed.map(({ key }) => key)));
    for (const { key, mapping, namespace, name, claims } of changed) {
      if (this.guarded(key, mapping) === undefined) {
        if (claims) this.undeclared.claim(key, { mapping, namespace, name });
        continue;
      }
      void this.options.live
        .get(mapping, namespace, name)
        .then((live) => this.check(key, live === undefined ? "delete" : "update", live, mapping))
        .catch((error: unknown) => {
          this.options.log.warn("could not read an object changed during a pass; asking for a pass", {
            object: key,
            error: String(error),
          });
          this.options.requestPass(`changed during a pass: ${key}`);
        });
    }
  }

  private onEvent(event: "add" | "update" | "delete", mapping: ResourceMapping, object: KubeObject): void {
    const id = idOf(mapping, object);
    const key = idKey(id);
    // A pass leaves an object paused by a fight alone, so a change to it is the other writer's: counted now, as
    // between passes, not folded with the pass's other changes into one check at its end.
    if (this.options.declarationsChanging?.() === true && !this.pausedByFight(key)) {
      // Possibly the pass's own write, whose watch event can arrive before its response; or an
      // object only the new commit declares. Decided when the pass ends, on the live copy then.
      this.changedDuringPass.set(`${key}@${mapping.version}`, {
        key,
        mapping,
        namespace: mapping.namespaced ? id.namespace : undefined,
        name: id.name,
        claims: event !== "delete" && this.undeclared.mayClaim(object, mapping),
      });
      return;
    }
    this.check(key, event, object, mapping);
  }

  /** Corrects `object` (undefined: deleted) if it no longer matches its declaration. */
  private check(
    key: string,
    event: "add" | "update" | "delete",
    object: KubeObject | undefined,
    mapping: ResourceMapping,
  ): void {
    if (this.guarded(key, mapping) === undefined) {
      if (object !== undefined && event !== "delete" && this.undeclared.mayClaim(object, mapping))
        this.undeclared.claim(key, {
          mapping,
          namespace: mapping.namespaced ? object.metadata.namespace : undefined,
          name: object.metadata.name,
        });
      return;
    }
    const schemas = this.options.schemas;
    if (object === undefined || event === "delete" || schemas === undefined || schemas.ready(mapping)) {
      this.decide(key, event, object);
      return;
    }
    // Matched on a stale or missing schema, a keyed list would compare whole: read it first.
    void schemas
      .ensure(mapping)
      .catch(() => undefined)
      .then(() => this.decide(key, event, object));
  }

  /**
   * The declaration guarded for `key`, if it is declared at `mapping`'s version: after a commit moves
   * an object to another apiVersion, a watch of the old one (still running, or its last events) shows
   * the object in a shape the declaration does not have, and every status change would read as drift.
   */
  private guarded(key: string, mapping: ResourceMapping): DesiredObject | undefined {
    const desired = this.declared.get(key);
    return desired !== undefined && splitApiVersion(desired.apiVersion)?.version === mapping.version
      ? desired
      : undefined;
  }

  private decide(key: string, event: "add" | "update" | "delete", object: KubeObject | undefined): void {
    const desired = this.declared.get(key);
    // Declared `managed: disabled`: released by a pass, never written here. A live `disabled` on an object
    // Git declares enabled is drift like any other (Config Sync overwrites hand-applied annotations).
    if (desired === undefined || isManagementDisabled(desired.object)) return;
    if (object !== undefined) {
      const annotations = object.metadata.annotations ?? {};
      if (conflictingManager(this.options.sync, annotations, desired) !== undefined) {
        // As Config Sync's remediator: not a drift to correct but a conflict, which one pass reports.
        if (!this.conflicts.has(key)) this.options.requestPass(`management conflict: ${key}`);
        this.conflicts.add(key);
        return;
      }
      this.conflicts.delete(key);
      if (event !== "delete" && (this.refused.get(key) === desired || !this.drifted(desired, object))) return;
    }
    if (this.pausedByFight(key)) {
      this.fightGoesOn(key);
      return;
    }
    this.remediate(key, desired, `${event === "delete" ? "deleted" : "changed"}: ${key}`);
  }

  /** One correction per object at a time; a change during it runs one more after it. */
  private remediate(key: string, desired: DesiredObject, reason: string): void {
    const correct = this.options.correct;
    if (correct === undefined) {
      this.options.requestPass(reason);
      return;
    }
    if (this.inFlight.has(key)) {
      this.inFlight.set(key, true);
      return;
    }
    this.inFlight.set(key, false);
    void correct(desired)
      .catch((error: unknown): Correction => {
        this.options.log.warn("drift correction failed; asking for a pass", { object: key, error: String(error) });
        return Correction.Deferred;
      })
      .then((correction) => {
        const again = this.inFlight.get(key) === true;
        this.inFlight.delete(key);
        if (correction === Correction.Refused) {
          if (this.declared.get(key) === desired) this.refused.set(key, desired);
          this.options.requestPass(reason);
          return;
        }
        if (correction === Correction.Deferred) {
          this.options.requestPass(reason);
          return;
        }
        if (correction === Correction.Written) {
          this.refused.delete(key);
          this.countCorrection(key, desired);
        }
        if (again && this.declared.get(key) === desired && !this.pausedByFight(key))
          this.remediate(key, desired, reason);
      });
  }

  private drifted(desired: DesiredObject, live: KubeObject): boolean {
    const decorated = decorate(desired, this.options.sync);
    // As Config Sync's remediator: a mutation-ignored object drifts only in Config Sync's metadata, and
    // an ignore annotation the declaration lacks is a drift of that metadata.
    if (mutationIgnored(decorated)) return withDeclaredMetadata(live, decorated, "") !== undefined;
    if (strayMutationAnnotation(live, decorated)) return true;
    const candidate = comparisonCandidate(decorated, live.metadata.annotations ?? {});
    // A record this declaration would not have written means someone else wrote the object: drift.
    const full = restoreRecord(live, [candidate], this.options.annotator);
    return full === undefined || !this.options.matcher.calculate(full, candidate).isEmpty();
  }

  /** The declaration being guarded for an object (the last complete pass's). */
  declaredFor(id: DesiredObject["id"]): DesiredObject | undefined {
    return this.declared.get(idKey(id));
  }

  /** Another writer drifted a paused object again: not corrected (no loop), but the fight is still counted. */
  private fightGoesOn(key: string): void {
    const fight = this.fights.get(key);
    if (fight !== undefined) this.options.onFight?.(fight);
  }

  private pausedByFight(key: string): boolean {
    const pausedUntil = this.paused.get(key);
    return pausedUntil !== undefined && pausedUntil > Date.now();
  }

  /**
   * Changes told during the pause are dropped, so when it ends nothing else looks at the object: the next poll
   * may be an hour away (spec.helm.period), and until a pass the object stays drifted and status says KNV2005.
   */
  private pause(key: string, windowMs: number): void {
    this.paused.set(key, Date.now() + windowMs);
    clearTimeout(this.pauseEnds.get(key));
    const timer = setTimeout(() => {
      this.pauseEnds.delete(key);
      this.options.requestPass(`fight pause over: ${key}`);
    }, windowMs);
    timer.unref();
    this.pauseEnds.set(key, timer);
  }

  /** A correction that wrote: past the threshold within the window, a fight pauses the object's corrections. */
  private countCorrection(key: string, desired: DesiredObject): void {
    const now = Date.now();
    const windowMs = this.options.fightWindowMs ?? 60_000;
    const threshold = this.options.fightThreshold ?? 5;
    const recent = (this.corrections.get(key) ?? []).filter((t) => now - t < windowMs);
    recent.push(now);
    this.corrections.set(key, recent);
    if (recent.length <= threshold) return;
    const fight = new FightError(desired, recent.length, windowMs);
    this.pause(key, windowMs);
    this.corrections.delete(key);
    this.fights.set(key, fight);
    this.options.log.warn("fight detected", { object: key, corrections: recent.length, code: fight.code });
    this.options.onFight?.(fight);
    // Polls skip when nothing changed in Git: ask for a pass so the fight reaches status now.
    this.options.requestPass(`fight: ${key}`);
  }
}
