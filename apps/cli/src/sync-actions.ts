/**
 * The levers on a sync, shared by `driftless sync | suspend | resume` and the console: each is one merge
 * patch of an annotation, made with the caller's own credentials, so Kubernetes RBAC decides (a user
 * who may not patch the sync gets the API server's 403) and the reconciler acts on it with or without
 * the CLI running.
 */
import { SyncAnnotation } from "@driftless/api";
import type { KubeClient, KubeObject } from "@driftless/kube";
import { mappingOf, type SyncRef } from "./sync-objects.ts";

export const SyncAction = {
  Sync: "sync",
  Suspend: "suspend",
  Resume: "resume",
} as const;
export type SyncAction = (typeof SyncAction)[keyof typeof SyncAction];

export function isSyncAction(value: string): value is SyncAction {
  return value === SyncAction.Sync || value === SyncAction.Suspend || value === SyncAction.Resume;
}

/** What a lever did: the object as the API server returned it, and for `sync` the request's value. */
export interface ActionResult {
  readonly object: KubeObject;
  readonly request?: string;
}

/** Applies `action` to the sync as the client's user; the API server's refusal (403, 404) is thrown as is. */
export async function act(
  client: KubeClient,
  ref: SyncRef,
  action: SyncAction,
  now = new Date(),
): Promise<ActionResult> {
  switch (action) {
    case SyncAction.Sync: {
      const request = now.toISOString();
      return { object: await patchAnnotation(client, ref, SyncAnnotation.SyncRequestedAt, request), request };
    }
    case SyncAction.Suspend:
      return { object: await patchAnnotation(client, ref, SyncAnnotation.Suspend, "true") };
    case SyncAction.Resume:
      // null in a merge patch removes the key.
      return { object: await patchAnnotation(client, ref, SyncAnnotation.Suspend, null) };
  }
}

function patchAnnotation(client: KubeClient, ref: SyncRef, key: string, value: string | null): Promise<KubeObject> {
  const patch = { metadata: { annotations: { [key]: value } } };
  return client.patch(mappingOf(ref.kind), ref.namespace, ref.name, patch, "merge");
}

/**
 * True once the reconciler has answered one of `requests`: it echoes the request it answered in
 * `driftless.dev/sync-request-handled`. The value is a token, compared whole, never as a time: a handled
 * value later than the request may come from another clock, or from anyone who may patch the sync.
 */
export function requestAnswered(sync: KubeObject, requests: ReadonlySet<string>): boolean {
  const handled = sync.metadata.annotations?.[SyncAnnotation.SyncRequestHandled];
  return handled !== undefined && requests.has(handled);
}

/** The request on the sync now: a later one may have replaced the caller's, and its pass is newer still. */
export function currentRequest(sync: KubeObject): string | undefined {
  return sync.metadata.annotations?.[SyncAnnotation.SyncRequestedAt];
}
