/**
 * The Secrets a sync's source reads (its secretRef and caCertSecretRef), watched as Config Sync's
 * reconciler-manager watches them: creating, changing or deleting one asks for a pass that reads them again
 * at once, not at the next poll (spec.<source>.period; 1 h for Helm). A missing Secret, reported as KNV1061,
 * is thus followed by a sync as soon as someone creates it. One metadata-only informer per name, by a
 * `metadata.name` field selector, which the manager's `<reconciler>-secrets` Role allows by resourceNames:
 * no Secret's data is held, and no other Secret is seen. The pass still reads each one with a GET.
 */
import { Informer, isForbidden, isUnauthorized, type KubeClient, type KubeObject } from "@driftless/kube";
import { Defaults, SourceType, type RSync } from "@driftless/api";
import type { Logger } from "./log.ts";
import { secretMapping } from "./rsync.ts";

/** The Secrets a pass reads for the sync's source (credentials.ts, artifact-credentials.ts); none for auth none. */
export function secretNamesReadBy(sync: RSync | undefined): string[] {
  if (sync === undefined) return [];
  const { git, oci, helm } = sync.spec;
  const sourceType = sync.spec.sourceType ?? Defaults.sourceType;
  const source = sourceType === SourceType.Oci ? oci : sourceType === SourceType.Helm ? helm : git;
  if (source === undefined) return [];
  // Git reads secretRef for every auth but none; OCI and Helm for token only.
  const readsSecretRef = sourceType === SourceType.Git ? source.auth !== "none" : source.auth === "token";
  const names = [readsSecretRef ? source.secretRef?.name : undefined, source.caCertSecretRef?.name];
  return [...new Set(names.filter((n): n is string => n !== undefined && n !== ""))];
}

export class SecretWatch {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #onChange: (reason: string) => void;
  readonly #log: Logger;
  readonly #informers = new Map<string, Informer>();
  #stopped = false;

  constructor(client: KubeClient, namespace: string, onChange: (reason: string) => void, log: Logger) {
    this.#client = client;
    this.#namespace = namespace;
    this.#onChange = onChange;
    this.#log = log;
  }

  /** Watches exactly `names` from now on (none once the spec names none). */
  async follow(names: readonly string[]): Promise<void> {
    const wanted = new Set(names);
    for (const [name, informer] of [...this.#informers]) {
      if (wanted.has(name)) continue;
      this.#informers.delete(name);
      await informer.stop();
    }
    if (this.#stopped) return;
    for (const name of wanted) if (!this.#informers.has(name)) this.#informers.set(name, this.#start(name));
  }

  /** Ends every watch, for good. */
  stop(): Promise<void> {
    this.#stopped = true;
    return this.follow([]);
  }

  #start(name: string): Informer {
    let refusalLogged = false;
    const informer = new Informer(this.#client, secretMapping, {
      namespace: this.#namespace,
      fieldSelector: `metadata.name=${name}`,
      metadataOnly: true,
      onError: (error) => {
        if (!isForbidden(error) && !isUnauthorized(error)) {
          this.#log.warn("watch of a Secret: list or watch failed; retrying", { name, error: error.message });
        } else if (!refusalLogged) {
          // Said once (the backoff retries every 30 s): a Role from an older manager grants `get` alone.
          refusalLogged = true;
          this.#log.warn("watch of a Secret not permitted: a change is read at the next poll; retrying", {
            name,
            error: error.message,
          });
        }
      },
    });
    // The first list is what the pass that started the watch reads already: only later events are changes.
    const changed = (why: string) => (_obj: KubeObject) => {
      if (informer.hasSynced) this.#onChange(`Secret ${this.#namespace}/${name} ${why}`);
    };
    informer.on("add", changed("created"));
    informer.on("update", changed("changed"));
    informer.on("delete", changed("deleted"));
    informer.start();
    return informer;
  }
}
