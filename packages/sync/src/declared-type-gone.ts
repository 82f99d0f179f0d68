import type { ResourceMapping } from "@driftless/kube";

/** What judging a vanished type reads from the reconciler. */
export interface DeclaredTypeGoneDeps {
  /** The last pass declared objects of this type. */
  declares(mapping: ResourceMapping): boolean;
  /** Types still watched (another version of a type keeps it served). */
  watchedTypes(): readonly ResourceMapping[];
  /** A pass runs that may change what is declared. */
  declarationsChanging(): boolean;
  /** Counts one resource conflict (resource_conflicts_total). */
  resourceConflict(): void;
  /** Asks for a pass: it reports the declared objects the server no longer serves (KNV1021) and applies them again. */
  requestPass(reason: string): void;
}

/**
 * The declared objects of a type went with its CRD, deleted by someone else: Config Sync's remediator counts
 * that as a resource conflict, once per type whatever versions were watched. A pass pruning the CRD changes
 * the declarations, so a type told gone during a pass that may do so (a poll still at its ls-remote) is judged
 * when the pass ends, against what it left declared; dropping it lost the conflict to every poll's fetch.
 * A declared version gone asks for a pass, as Config Sync's remediator retries a sync once a watch ends: a
 * version unserved in place deletes no object, so nothing else would start one before the resync.
 */
export class DeclaredTypeGone {
  private readonly deps: DeclaredTypeGoneDeps;
  private readonly toldDuringPass = new Map<string, ResourceMapping>();

  constructor(deps: DeclaredTypeGoneDeps) {
    this.deps = deps;
  }

  told(mapping: ResourceMapping): void {
    if (this.deps.declarationsChanging()) {
      this.toldDuringPass.set(`${mapping.group}/${mapping.resource}`, mapping);
      return;
    }
    if (!this.deps.declares(mapping)) return;
    this.deps.requestPass(`${mapping.resource}.${mapping.group}/${mapping.version} is no longer served`);
    if (this.deps.watchedTypes().some((m) => m.group === mapping.group && m.resource === mapping.resource)) return;
    this.deps.resourceConflict();
  }

  /** Called as each pass ends. */
  recheck(): void {
    const told = [...this.toldDuringPass.values()];
    this.toldDuringPass.clear();
    for (const mapping of told) this.told(mapping);
  }
}
