/**
 * How a reconciler pod gets Redis: REDIS_URL without credentials, and REDIS_USERNAME and
 * REDIS_PASSWORD from its own Secret (`secretKeyRef`), written by the manager (redis-secret.ts), so
 * the Deployment, readable by many, holds only the Secret's name. In process mode the child gets
 * the same variables in its environment, never its argv (which `ps` shows to every user).
 */
import { withoutRedisCredentials } from "@driftless/queue";

/** A key of a Secret in config-management-system, beside the reconciler Deployments. */
export interface SecretKeyRef {
  readonly name: string;
  readonly key: string;
}

export type EnvVar =
  | { readonly name: string; readonly value: string }
  | { readonly name: string; readonly valueFrom: { readonly secretKeyRef: SecretKeyRef } };

/** Keys of a reconciler's Redis credential Secret. */
export const RedisSecretKey = { Username: "username", Password: "password" } as const;

/** The Redis part of a reconciler container's env. Credentials in `url` are dropped, never written. */
export function reconcilerRedisEnv(url: string, credentialSecret: string): EnvVar[] {
  const fromSecret = (name: string, key: string): EnvVar => ({
    name,
    valueFrom: { secretKeyRef: { name: credentialSecret, key } },
  });
  return [
    { name: "REDIS_URL", value: withoutRedisCredentials(url) },
    fromSecret("REDIS_USERNAME", RedisSecretKey.Username),
    fromSecret("REDIS_PASSWORD", RedisSecretKey.Password),
  ];
}
