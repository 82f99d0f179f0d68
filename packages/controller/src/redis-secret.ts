/**
 * A reconciler pod's Redis credential Secret (deployment mode), in config-management-system and
 * labelled as the sync's like its other objects. The manager writes and deletes it but never reads
 * it back (its RBAC has no `get` on Secrets): the password is derived again when needed
 * (redis-users.ts).
 */
import { reconcilerName, RootSyncNamespace } from "@driftless/api";
import { isAlreadyExists, isNotFound, type KubeClient, type KubeObject } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { redisSecretName } from "./deployment-spec.ts";
import { syncOwnedLabels } from "./labels.ts";
import { RedisSecretKey } from "./redis-env.ts";
import type { RedisCredential } from "./redis-users.ts";
import { Resource } from "./resources.ts";

function secretOf(sync: SyncRef, credential: RedisCredential): KubeObject {
  const base64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: redisSecretName(reconcilerName(sync.kind, sync.namespace, sync.name)),
      namespace: RootSyncNamespace,
      labels: syncOwnedLabels(sync),
    },
    type: "Opaque",
    data: {
      [RedisSecretKey.Username]: base64(credential.username),
      [RedisSecretKey.Password]: base64(credential.password),
    },
  };
}

/** Writes the Secret whatever it held (an unconditional PUT, or a create when there is none). */
export async function writeRedisSecret(client: KubeClient, sync: SyncRef, credential: RedisCredential): Promise<void> {
  const secret = secretOf(sync, credential);
  try {
    await client.replace(Resource.Secret, secret);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await createRedisSecret(client, sync, credential);
  }
}

/** Creates the Secret unless it exists (then left as it is). */
export async function createRedisSecret(client: KubeClient, sync: SyncRef, credential: RedisCredential): Promise<void> {
  try {
    await client.create(Resource.Secret, secretOf(sync, credential));
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

export async function deleteRedisSecret(client: KubeClient, sync: SyncRef): Promise<void> {
  await client.delete(
    Resource.Secret,
    RootSyncNamespace,
    redisSecretName(reconcilerName(sync.kind, sync.namespace, sync.name)),
  );
}
