/**
 * An informer's cache: objects by namespace/name, and the rule for which of two copies is newer.
 */
import type { KubeObject } from "./types.ts";

/**
 * True when `candidate` should replace `current`. resourceVersions are opaque strings by
 * contract, but every real server (etcd revisions) sends integers: compare them as integers
 * when both parse, else trust the later arrival.
 */
export function isNewer(candidate: string | undefined, current: string | undefined): boolean {
  if (candidate === undefined || current === undefined) return true;
  const a = parseRv(candidate);
  const b = parseRv(current);
  if (a === undefined || b === undefined) return true;
  return a >= b;
}

/** Strictly older, when both are integers; unknown order counts as not older. */
export function isOlder(candidate: string | undefined, current: string | undefined): boolean {
  if (candidate === undefined || current === undefined) return false;
  const a = parseRv(candidate);
  const b = parseRv(current);
  return a !== undefined && b !== undefined && a < b;
}

function parseRv(rv: string): bigint | undefined {
  // BigInt: etcd revisions are int64, beyond Number's safe range in principle.
  return /^\d{1,19}$/.test(rv) ? BigInt(rv) : undefined;
}

export function storeKey(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`;
}

export function keyOf(obj: KubeObject): string {
  return storeKey(obj.metadata.namespace, obj.metadata.name);
}

export class ObjectStore {
  #objects = new Map<string, KubeObject>();

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#objects.get(storeKey(namespace, name));
  }

  getByKey(key: string): KubeObject | undefined {
    return this.#objects.get(key);
  }

  list(): KubeObject[] {
    return [...this.#objects.values()];
  }

  keys(): IterableIterator<string> {
    return this.#objects.keys();
  }

  get size(): number {
    return this.#objects.size;
  }

  set(obj: KubeObject): void {
    this.#objects.set(keyOf(obj), obj);
  }

  delete(key: string): void {
    this.#objects.delete(key);
  }
}
