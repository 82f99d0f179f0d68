import { UserAnnotation } from "@driftless/api";
import type { ApplyOptions, ObjectId, PruneOptions } from "@driftless/applier";
import type { KubeObject } from "@driftless/kube";
import { parseDependsOn } from "@driftless/source";
import { namespaceInUse } from "./namespace-usage.ts";
import type { ReconcilerOptions } from "./reconciler-options.ts";
import type { ReconcilerParts } from "./wiring.ts";

/** What the applier gets to apply one commit's objects: a pass's apply, or the remediator's correction. */
export function applyOptionsFor(parts: ReconcilerParts, options: ReconcilerOptions, commit: string): ApplyOptions {
  return {
    client: parts.client,
    mapper: parts.mapper,
    live: parts.live,
    sync: options.identity,
    commit,
    annotator: parts.annotator,
    matcher: parts.matcher,
    schemas: parts.schemas,
    concurrency: options.concurrency ?? 32,
    fieldManager: "driftless",
    verified: parts.verified,
    previousDeclaration: (id) => parts.remediator?.declaredFor(id),
    log: parts.log,
    // A stop cuts depends-on waits (up to reconcileTimeout) short, so the process exits inside its grace.
    signal: parts.abort.signal,
  };
}

/** What prune gets: a pass's prune and the deletion finalizer's. */
export function pruneOptionsFor(parts: ReconcilerParts, options: ReconcilerOptions): PruneOptions {
  return {
    client: parts.client,
    mapper: parts.mapper,
    sync: options.identity,
    lastAppliedAnnotation: parts.annotator.annotationKey,
    concurrency: Math.min(options.concurrency ?? 16, 16),
    namespaceInUse: (namespace, pruning) => namespaceInUse(parts.client, namespace, pruning),
    dependsOn: liveDependsOn,
  };
}

/** A live object's depends-on, which orders its deletion; a malformed value orders nothing (no source with it applied). */
function liveDependsOn(live: KubeObject): readonly ObjectId[] {
  const value = live.metadata.annotations?.[UserAnnotation.DependsOn];
  if (value === undefined) return [];
  const parsed = parseDependsOn(value);
  return parsed.ok ? parsed.refs : [];
}
