import {
  DriftlessError,
  ErrorClass,
  KnvCode,
  UserAnnotation,
  inventoryId,
  managerAnnotationValue,
  toDriftlessError,
} from "@driftless/api";
import {
  failureText,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isResourceTypeMissing,
  type KubeObject,
  type ResourceMapping,
  type WriteOptions,
} from "@driftless/kube";
import { applyPatch, type Annotator } from "@driftless/objectmatcher";
import { awaitsAdoption, withAdoptedRecord } from "./adoption.ts";
import { holdsDeclared } from "./answered-as-declared.ts";
import type { ApplyOptions } from "./apply-options.ts";
import { Operation, type ApplyOutcome } from "./apply-outcome.ts";
import { computeHealth, type HealthStatus } from "./kstatus.ts";
import {
  annotationsOf,
  comparisonCandidate,
  decorate,
  isManagementDisabled,
  mutationIgnored,
  strayMutationAnnotation,
  withDeclaredMetadata,
  withToken,
} from "./decorate.ts";
import { declaredResource, type DesiredObject, type JsonObject } from "./desired.ts";
import { describeId } from "./object-id.ts";
import { conflictingManager, ManagementConflictError } from "./precedence.ts";
import { hasRecordDigest, restoreRecord } from "./record-digest.ts";
import { ownedBy } from "./prune.ts";
import { releaseDeclared } from "./release.ts";

/**
 * At apply time, the API server does not serve the object's kind, even after discovery was refreshed
 * (KNV1021); the read's counterpart is the source's UnknownKindAtReadError.
 */
export class UnknownKindAtApplyError extends DriftlessError {
  constructor(desired: DesiredObject) {
    super({
      code: KnvCode.UnknownObjectKind,
      errorClass: ErrorClass.Terminal,
      message: `No CustomResourceDefinition is defined for the type "${desired.id.group === "" ? desired.id.kind : `${desired.id.kind}.${desired.id.group}`}" in the cluster: the API server does not serve ${desired.apiVersion} ${desired.id.kind}; install its CRD or fix apiVersion/kind`,
      resources: [declaredResource(desired)],
    });
  }
}

/** Every failed write is KNV2009, a refusal by RBAC too: Config Sync's applier reports them all so. */
export class ApplyError extends DriftlessError {
  constructor(desired: DesiredObject, cause: unknown) {
    super({
      code: KnvCode.Apply,
      errorClass: toDriftlessError(cause).errorClass,
      message: `failed to apply ${describeId(desired.id)}: ${refusalNamingObject(failureText(cause), cause, desired.id.name)}`,
      resources: [declaredResource(desired)],
      cause,
    });
  }
}

/**
 * A refused create names no object (a POST to the collection has no name): `configmaps is forbidden: ...`.
 * Config Sync creates by server-side apply, a request to the object, which the server refuses as
 * `configmaps "a" is forbidden: ... cannot create ...` (e2e validateRepoSyncRBAC); name it the same.
 */
function refusalNamingObject(text: string, cause: unknown, name: string): string {
  if (!isForbidden(cause)) return text;
  return text.replace(
    /^([^\s"]+) is forbidden: /,
    (_, resource: string) => `${resource} ${JSON.stringify(name)} is forbidden: `,
  );
}

const maxConflictRetries = 5;

/** Applies one object with the three-way match: writes only when something we declare differs. */
export async function applyObject(desired: DesiredObject, options: ApplyOptions): Promise<ApplyOutcome> {
  let mapping: ResourceMapping | undefined;
  let liveOwned = false;
  let attempted: ApplyOutcome["attempted"];
  try {
    mapping = await options.mapper.mappingFor(desired.apiVersion, desired.id.kind);
    if (mapping === undefined) {
      if (isManagementDisabled(desired.object)) return { desired, operation: Operation.Skipped };
      return { desired, operation: Operation.Failed, error: new UnknownKindAtApplyError(desired) };
    }
    const namespace = mapping.namespaced ? desired.id.namespace : undefined;
    if (isManagementDisabled(desired.object)) {
      if (options.dryRun === true) return { desired, operation: Operation.Skipped, mapping };
      await releaseDeclared(mapping, namespace, desired.id.name, {
        ...options,
        lastAppliedAnnotation: options.annotator.annotationKey,
      });
      return { desired, operation: Operation.Skipped, mapping };
    }
    const cachedVersion = options.live.cachedResourceVersion?.(mapping, namespace, desired.id.name);
    const verified = options.verified?.lookup(desired, cachedVersion);
    if (verified !== undefined) return { desired, operation: Operation.Unchanged, health: verified, mapping };
    const decorated = decorate(desired, options.sync);

    for (let attempt = 0; ; attempt++) {
      const current = await liveWithRecord(desired, decorated, mapping, namespace, options);
      liveOwned = current !== undefined && ownedBy(current, options.sync);
      try {
        if (current === undefined) {
          if (options.dryRun === true) return { desired, operation: Operation.Created, mapping };
          const body = withRecord(decorated, options.commit, options.annotator);
          attempted = "create";
          const created = await options.client.create(mapping, body as KubeObject, writeOptions(options));
          options.live.remember(mapping, created);
          const health = computeHealth(created);
          verifyWritten(desired, decorated, body, created, health, options);
          return { desired, operation: Operation.Created, health, mapping };
        }
        const liveAnnotations = current.metadata.annotations ?? {};
        // Config Sync's precedence: a RootSync takes over what a RepoSync manages, never the reverse.
        const otherManager = conflictingManager(options.sync, liveAnnotations, desired);
        if (otherManager !== undefined) {
          const self = managerAnnotationValue(options.sync.kind, options.sync.namespace, options.sync.name);
          return {
            desired,
            operation: Operation.Failed,
            health: computeHealth(current),
            mapping,
            error: new ManagementConflictError(desired, otherManager, self),
          };
        }
        if (mutationIgnored(decorated)) {
          // Its content stays as it is; only Config Sync's metadata follows the declaration, as there.
          const update = withDeclaredMetadata(current, decorated, options.commit);
          if (update === undefined)
            return { desired, operation: Operation.Unchanged, health: computeHealth(current), mapping };
          if (options.dryRun === true)
            return { desired, operation: Operation.Updated, health: computeHealth(current), mapping };
          const updated = await options.client.update(mapping, current, update as KubeObject, writeOptions(options));
          options.live.remember(mapping, updated);
          if (keptNothing(current, updated)) return unkept(desired, updated, mapping, options);
          return { desired, operation: Operation.Updated, health: computeHealth(updated), mapping };
        }
        // An ignore annotation the declaration does not carry (put there by hand) goes, as Config Sync's metadata.
        const stray = strayMutationAnnotation(current, decorated);
        const candidate = comparisonCandidate(decorated, liveAnnotations, options.commit);
        // Only a match needs the schema: a create above never waits for one.
        await options.schemas?.ensure(mapping);
        let result = options.matcher.calculate(current, candidate);
        // Before a write, a CRD change newer than what was read (its watch event still on the way) is read.
        if (!result.isEmpty() && (await options.schemas?.confirm(mapping, current.metadata.resourceVersion)) === true)
          result = options.matcher.calculate(current, candidate);
        if (result.isEmpty() && !stray) {
          const health = computeHealth(current);
          options.verified?.record(desired, current, health);
          return { desired, operation: Operation.Unchanged, health, mapping };
        }

        if (options.dryRun === true)
          return { desired, operation: Operation.Updated, health: computeHealth(current), mapping };
        // A full update of current with the patch applied keeps what others own (fields, list
        // items, labels) and sends exact strategic-merge semantics, which a generic patch client would lose.
        const record = withRecord(decorated, options.commit, options.annotator);
        const body = applyPatch(current, result) as KubeObject;
        body.metadata = {
          ...body.metadata,
          resourceVersion: current.metadata.resourceVersion,
          labels: { ...body.metadata.labels, ...((record["metadata"] as KubeObject["metadata"]).labels ?? {}) },
          annotations: { ...body.metadata.annotations, ...annotationsOf(record) },
        };
        if (stray) delete body.metadata.annotations?.[UserAnnotation.LifecycleMutation];
        attempted = "update";
        const updated = await options.client.update(mapping, current, body, writeOptions(options));
        options.live.remember(mapping, updated);
        if (keptNothing(current, updated)) return unkept(desired, updated, mapping, options);
        const health = computeHealth(updated);
        verifyWritten(desired, decorated, record, updated, health, options);
        return { desired, operation: Operation.Updated, health, mapping };
      } catch (error) {
        // Optimistic concurrency: someone wrote between our read and write; re-read and re-decide.
        if ((isConflict(error) || isAlreadyExists(error)) && attempt < maxConflictRetries) {
          // The fresh copy goes into the live state, so the next attempt decides on it (not on a
          // stale cached copy, nor on an empty slot that would try to create it again).
          options.live.forget(mapping, namespace, desired.id.name);
          const fresh = await options.live.refresh(mapping, namespace, desired.id.name);
          if (fresh !== undefined) options.live.remember(mapping, fresh);
          continue;
        }
        throw error;
      }
    }
  } catch (error) {
    // The path of the mapping is not served: discovery is behind (a CRD created again with another scope or
    // versions, unseen without a CRD watch), so the next lookup reads it again rather than fail this way for good.
    if (isResourceTypeMissing(error)) options.mapper.invalidate();
    const failed = { desired, operation: Operation.Failed, mapping, error: new ApplyError(desired, error), liveOwned };
    return attempted === undefined ? failed : { ...failed, attempted };
  }
}

/**
 * Strict: a field the API server does not know fails the write (400, KNV2009 for that object alone, as
 * Config Sync's server-side apply refuses it) instead of being dropped with a warning and written again
 * at every pass.
 */
function writeOptions(options: ApplyOptions): WriteOptions {
  return { fieldManager: options.fieldManager, fieldValidation: "Strict" };
}

/** The answer carries the resourceVersion the patch was sent against: the server stored nothing of it. */
function keptNothing(current: KubeObject, answer: KubeObject): boolean {
  const sentAgainst = current.metadata.resourceVersion;
  return sentAgainst !== undefined && answer.metadata.resourceVersion === sentAgainst;
}

/**
 * A write the server kept nothing of (a field it clears, such as one a disabled feature gate drops,
 * which Strict validation lets through) changed nothing: Unchanged, not Updated, so it counts as no
 * correction. It is remembered against this declaration and resourceVersion, so the same patch is not
 * sent again until one of them changes, and logged once: a gap in our own normalisation, not the
 * user's error, so it fails no sync.
 */
function unkept(
  desired: DesiredObject,
  answer: KubeObject,
  mapping: ResourceMapping,
  options: ApplyOptions,
): ApplyOutcome {
  const health = computeHealth(answer);
  const first = options.verified?.recordKeptNothing(desired, answer, health) ?? true;
  if (first)
    options.log?.warn(
      "the API server kept nothing of a write: it will not be sent again until the object or its declaration changes",
      {
        object: describeId(desired.id),
        sourcePath: desired.sourcePath,
        resourceVersion: answer.metadata.resourceVersion,
      },
    );
  return { desired, operation: Operation.Unchanged, health, mapping };
}

/**
 * Records a write's answer as verified when it matches the declaration, so the resync after a bulk
 * apply does not match every object again. An answer that carries the record we sent and holds every
 * declared field as sent needs no three-way match (answered-as-declared.ts); any other goes through
 * the matcher, which costs microseconds here, where in the resync it would cost a cache read, a record
 * restore and the match. An answer that does not match (a webhook or the server changed a declared
 * field) is not recorded: the next pass compares it as usual.
 *
 * `declared` is the declaration as written (withRecord): decorated, with the commit token and the
 * record. An answer that holds it holds the comparison candidate too (the same less the record, whose
 * value is compared first, with the answer's token, which is then ours); one that does not, say
 * because a webhook rewrote the token, goes to the matcher with that candidate.
 */
function verifyWritten(
  desired: DesiredObject,
  decorated: JsonObject,
  declared: JsonObject,
  written: KubeObject,
  health: HealthStatus,
  options: ApplyOptions,
): void {
  if (options.verified === undefined) return;
  const writtenAnnotations = written.metadata.annotations ?? {};
  const recordKey = options.annotator.annotationKey;
  const asSent =
    writtenAnnotations[recordKey] === annotationsOf(declared)[recordKey] && holdsDeclared(declared, written);
  if (
    asSent ||
    options.matcher.calculate(written, comparisonCandidate(decorated, writtenAnnotations, options.commit)).isEmpty()
  )
    options.verified.record(desired, written, health);
}

/**
 * The live object, with its last-applied record when the live state keeps only a digest of it: put
 * back from the current or the previous declaration, or else read fresh from the API server. An
 * object of this sync without a record (Config Sync applied it) is read fresh, and what Config Sync
 * applied stands in for the record (adoption.ts).
 */
async function liveWithRecord(
  desired: DesiredObject,
  decorated: JsonObject,
  mapping: ResourceMapping,
  namespace: string | undefined,
  options: ApplyOptions,
): Promise<KubeObject | undefined> {
  const current = await options.live.get(mapping, namespace, desired.id.name);
  if (current === undefined) return current;
  const manager = managerAnnotationValue(options.sync.kind, options.sync.namespace, options.sync.name);
  const inventory = inventoryId(options.sync.namespace, options.sync.name);
  if (awaitsAdoption(current, options.annotator.annotationKey, manager, inventory))
    return withAdoptedRecord(await options.live.refresh(mapping, namespace, desired.id.name), options.annotator);
  if (!hasRecordDigest(current, options.annotator.annotationKey)) return current;
  const annotations = current.metadata.annotations ?? {};
  const bodies = [comparisonCandidate(decorated, annotations, options.commit)];
  const previous = options.previousDeclaration?.(desired.id);
  if (previous !== undefined && previous !== desired)
    bodies.push(comparisonCandidate(decorate(previous, options.sync), annotations, options.commit));
  return (
    restoreRecord(current, bodies, options.annotator) ??
    (await options.live.refresh(mapping, namespace, desired.id.name))
  );
}

/** The object to write: declared state, the commit token, and the last-applied record of both. */
function withRecord(decorated: JsonObject, commit: string, annotator: Annotator): JsonObject {
  const body = withToken(decorated, commit);
  annotator.setLastAppliedAnnotation(body);
  return body;
}
