/**
 * How a reconciler gets Redis without its password showing: in a pod, REDIS_URL without the
 * password and REDIS_PASSWORD from a Secret (`secretKeyRef`), so the Deployment, readable by many,
 * holds only the Secret's name; in process mode, through the child's environment, never its argv
 * (which `ps` shows to every user of the machine).
 */
import { hasRedisPassword, withoutRedisPassword } from "@driftless/queue";

/** A key of a Secret in config-management-system, beside the reconciler Deployments. */
export interface SecretKeyRef {
  readonly name: string;
  readonly key: string;
}

export type EnvVar =
  | { readonly name: string; readonly value: string }
  | { readonly name: string; readonly valueFrom: { readonly secretKeyRef: SecretKeyRef } };

/** The Redis part of a reconciler container's env. A password in `url` is dropped, never written. */
export function reconcilerRedisEnv(url: string, passwordSecret: SecretKeyRef | undefined): EnvVar[] {
  return [
    { name: "REDIS_URL", value: hasRedisPassword(url) ? withoutRedisPassword(url) : url },
    ...(passwordSecret === undefined
      ? []
      : [
          {
            name: "REDIS_PASSWORD",
            valueFrom: { secretKeyRef: { name: passwordSecret.name, key: passwordSecret.key } },
          },
        ]),
  ];
}
