/**
 * The slice of Kubernetes ObjectMeta that driftless reads and writes. Declared here because
 * packages/api depends on nothing; fields it does not know are kept by callers as they are.
 */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
}

/** Group, kind, namespace and name: how an object is identified across versions. */
export interface ObjectRef {
  /** "" for the core group. */
  readonly group: string;
  readonly kind: string;
  /** "" or absent for cluster-scoped objects. */
  readonly namespace?: string;
  readonly name: string;
}
