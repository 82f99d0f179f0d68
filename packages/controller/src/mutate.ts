/**
 * Read-modify-write with optimistic concurrency. The manager shares objects with others (the
 * reconciler writes the same RSync's status and finalizers; several syncs share one role binding),
 * so every write carries the resourceVersion it was computed from and a 409 means: read again.
 */
import { isConflict, isNotFound, type KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";

const maxAttempts = 8;

export interface MutateOptions {
  /** Write the status subresource instead of the object. */
  readonly status?: boolean;
}

/**
 * Applies `change` to the live object until the write sticks. `change` returns the next object,
 * or undefined when nothing needs writing. Returns the object as last read or written, or
 * undefined when it does not exist.
 */
export async function mutate(
  client: KubeClient,
  mapping: ResourceMapping,
  namespace: string | undefined,
  name: string,
  change: (live: KubeObject) => KubeObject | undefined,
  options: MutateOptions = {},
): Promise<KubeObject | undefined> {
  for (let attempt = 1; ; attempt++) {
    const live = await client.get(mapping, namespace, name);
    if (live === undefined) return undefined;
    const next = change(live);
    if (next === undefined) return live;
    try {
      return options.status === true ? await client.replaceStatus(mapping, next) : await client.replace(mapping, next);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      if (!isConflict(error) || attempt >= maxAttempts) throw error;
    }
  }
}
