import { redactUrl } from "@driftless/api";
import type { Logger } from "@driftless/sync";
import { syncsForPush, type PushMatch } from "./push-match.ts";
import type { SyncQueues } from "./sync-queues.ts";
import type { SyncWatcher } from "./sync-watcher.ts";
import type { Push } from "./webhook-push.ts";

/** Hands a webhook's push to the queues of the syncs it concerns, on the leader and on a standby alike. */
export class PushRouter {
  readonly #watcher: SyncWatcher;
  readonly #syncQueues: SyncQueues;
  readonly #isLeader: () => boolean;
  readonly #log: Logger;
  readonly #unreadableRepos = new Set<string>();

  constructor(options: {
    readonly watcher: SyncWatcher;
    readonly syncQueues: SyncQueues;
    readonly isLeader: () => boolean;
    readonly log: Logger;
  }) {
    this.#watcher = options.watcher;
    this.#syncQueues = options.syncQueues;
    this.#isLeader = options.isLeader;
    this.#log = options.log;
  }

  /** How many syncs the push was queued for. */
  async route(push: Push): Promise<number> {
    // Every replica answers webhooks: the fetch runs on the sync's own queue, wherever its reconciler is.
    await this.#watcher.synced();
    const { syncs, unreadable } = syncsForPush(this.#watcher.syncs(), push);
    this.#warnUnreadableRepos(unreadable);
    // The leader closes a handle when it tears its sync down; a standby, when a push finds the sync gone.
    if (!this.#isLeader()) await this.#syncQueues.keepOnly(this.#watcher.syncRefs());
    await Promise.all(
      syncs.map((sync) =>
        this.#syncQueues.get(sync).enqueue("webhook", {
          reason: `push to ${push.branch}`,
          ...(push.commit === undefined ? {} : { commit: push.commit }),
        }),
      ),
    );
    return syncs.length;
  }

  /** Once per sync and URL: every push would otherwise repeat it. */
  #warnUnreadableRepos(unreadable: PushMatch["unreadable"]): void {
    for (const { sync, repo } of unreadable) {
      const key = `${sync.kind}/${sync.namespace}/${sync.name} ${repo}`;
      if (this.#unreadableRepos.has(key)) continue;
      this.#unreadableRepos.add(key);
      this.#log.warn("a sync's spec.git.repo cannot be read as a URL; webhooks skip it", {
        sync: `${sync.kind}/${sync.namespace}/${sync.name}`,
        repo: redactUrl(repo),
      });
    }
  }
}
