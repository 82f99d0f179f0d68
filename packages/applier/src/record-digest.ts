/**
 * A watch cache holds every managed object for the life of the reconciler, and half of a small
 * object is its last-applied record. The cache keeps a digest of the record instead, and the record
 * is put back when a match needs it: it is, by construction, what writing one of the known
 * declarations would store (the current one, or the previous commit's), so computing those and
 * comparing digests recovers it exactly. Only a record that neither produced (the reconciler
 * restarted after the source changed, or someone edited the annotation) costs a fresh GET.
 */
import { hash } from "node:crypto";
import type { KubeObject } from "@driftless/kube";
import type { Annotator } from "@driftless/objectmatcher";
import type { JsonObject } from "./desired.ts";

/** No real record starts like this: records are JSON (`{`) or `br64:`. */
const digestPrefix = "driftless.dev/sha256:";
/** Shorter records are kept as they are: a digest would not be smaller. */
const digestFromChars = 128;

function digestOf(value: string): string {
  return digestPrefix + hash("sha256", value, "hex");
}

function withAnnotation(obj: KubeObject, key: string, value: string): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, [key]: value } } };
}

/**
 * What a cache keeps in place of a record annotation's value: its digest, or undefined when the
 * value is kept as it is (absent, too short to gain, or a digest already).
 */
export function cachedRecordValue(value: string | undefined): string | undefined {
  if (value === undefined || value.length < digestFromChars || value.startsWith(digestPrefix)) return undefined;
  return digestOf(value);
}

/** A cache transform: the record under `annotationKey` replaced by its digest. */
export function digestRecord(annotationKey: string): (obj: KubeObject) => KubeObject {
  return (obj) => {
    const digest = cachedRecordValue(obj.metadata.annotations?.[annotationKey]);
    return digest === undefined ? obj : withAnnotation(obj, annotationKey, digest);
  };
}

/** True when `obj` carries a digest in place of its record (it came from such a cache). */
export function hasRecordDigest(obj: KubeObject, annotationKey: string): boolean {
  return obj.metadata.annotations?.[annotationKey]?.startsWith(digestPrefix) === true;
}

/**
 * `live` with its record back, taken from the first of `bodies` (each an object as driftless would
 * write it, commit token included) whose record has the digest `live` carries; `live` itself when it
 * carries a record, not a digest; undefined when no body matches.
 */
export function restoreRecord(
  live: KubeObject,
  bodies: readonly JsonObject[],
  annotator: Annotator,
): KubeObject | undefined {
  const key = annotator.annotationKey;
  if (!hasRecordDigest(live, key)) return live;
  const digest = live.metadata.annotations?.[key];
  for (const body of bodies) {
    let value: string;
    try {
      value = annotator.encodeRecord(body);
    } catch {
      continue; // too large to record: it cannot be what was stored
    }
    if (digestOf(value) === digest) return withAnnotation(live, key, value);
  }
  return undefined;
}
