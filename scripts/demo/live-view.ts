/**
 * Prints changes to the demo's objects as they happen: `+` appeared, `~` changed, `-` gone. It
 * polls (a few objects, four times a second) so what it shows is exactly what a user would see
 * with `kubectl get -w`.
 */
import type { KubeClient, KubeObject } from "@driftless/kube";
import { configMaps, namespaces } from "./mappings.ts";

function describe(obj: KubeObject): string {
  if (obj.kind === "Namespace") return `Namespace ${obj.metadata.name}`;
  const data = (obj["data"] ?? {}) as Record<string, string>;
  const text = Object.entries(data)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  return `ConfigMap ${obj.metadata.namespace}/${obj.metadata.name} {${text}}`;
}

export class LiveView {
  readonly #client: KubeClient;
  readonly #watched: readonly string[];
  readonly #started = Date.now();
  #seen = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #queue: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(client: KubeClient, watchedNamespaces: readonly string[]) {
    this.#client = client;
    this.#watched = watchedNamespaces;
  }

  /** Looks four times a second (each look after the previous one is done) until stop(). */
  start(): void {
    this.#stopped = false;
    const next = (): void => {
      if (!this.#stopped) this.#timer = setTimeout(() => void this.poll().then(next), 250);
    };
    next();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** One look at the cluster, after any look in progress, so what it prints is complete when it resolves. */
  poll(): Promise<void> {
    this.#queue = this.#queue.then(() => this.#look());
    return this.#queue;
  }

  async #look(): Promise<void> {
    try {
      const now = new Map<string, string>();
      for (const ns of (await this.#client.list(namespaces)).items.filter((n) =>
        this.#watched.includes(n.metadata.name),
      )) {
        if (ns.metadata.deletionTimestamp === undefined) now.set(`ns/${ns.metadata.name}`, describe(ns));
      }
      for (const name of this.#watched) {
        for (const cm of (await this.#client.list(configMaps, { namespace: name })).items) {
          if (cm.metadata.name === "kube-root-ca.crt") continue;
          now.set(`cm/${name}/${cm.metadata.name}`, describe(cm));
        }
      }
      for (const [key, text] of now) {
        const before = this.#seen.get(key);
        if (before === undefined) this.line("+", text);
        else if (before !== text) this.line("~", text);
      }
      for (const [key, text] of this.#seen) if (!now.has(key)) this.line("-", text);
      this.#seen = now;
    } catch {
      // The cluster is busy or restarting: the next poll shows what changed meanwhile.
    }
  }

  line(mark: string, text: string): void {
    const seconds = ((Date.now() - this.#started) / 1000).toFixed(1).padStart(6);
    process.stdout.write(`  [${seconds}s] ${mark} ${text}\n`);
  }

  /** The object as last seen, for the demo's waits. */
  seen(key: string): string | undefined {
    return this.#seen.get(key);
  }
}
