/**
 * Deployment mode: what a reconciler pod's Redis password is derived from. A hash of the spec alone
 * made it deterministic: a leaked password stayed valid until the spec changed and became valid again
 * when the spec returned to an earlier value. So each rollout also draws a random nonce, kept in an
 * annotation of the Deployment, where every manager replica (and a restarted one) reads it back without
 * reading Secrets. It is no secret by itself: the password also needs the admin password.
 */
import { randomBytes } from "node:crypto";
import type { KubeObject } from "@driftless/kube";

/** On the reconciler Deployment: the nonce of the rollout its pod template belongs to. */
export const RedisNonceAnnotation = "driftless.dev/redis-nonce";

export interface RedisRollout {
  readonly nonce: string;
  /** What derivedPassword mixes in: the spec hash and the nonce. */
  readonly generation: string;
}

/** 128 random bits, hex. */
export function newRedisNonce(): string {
  return randomBytes(16).toString("hex");
}

/**
 * The rollout of a pod template of spec hash `hash`: the live Deployment's nonce while its template is
 * of that hash (the same pod, or one a replica already rolled out), otherwise a new one (a first pod, a
 * spec change, a Deployment deleted by hand): every pod replacement rotates the password.
 */
export function redisRollout(
  live: KubeObject | undefined,
  liveHash: string | undefined,
  hash: string,
  newNonce: () => string = newRedisNonce,
): RedisRollout {
  const kept = live?.metadata.annotations?.[RedisNonceAnnotation];
  const nonce = kept !== undefined && kept !== "" && liveHash === hash ? kept : newNonce();
  return { nonce, generation: `${hash}\n${nonce}` };
}
