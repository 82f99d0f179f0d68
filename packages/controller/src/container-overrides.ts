/**
 * `spec.override.resources` and `spec.override.logLevels` name Config Sync's containers. driftless runs
 * two per reconciler: the reconciler, which also fetches (git-sync, oci-sync, helm-sync and its
 * askpass sidecar) and serves the metrics otel-agent would export, and the render container
 * (hydration-controller). An entry for a container Config Sync has goes to the one doing that work;
 * requests and limits of several entries that land on one container add up, since it does all
 * their work. A name neither knows is reported on the sync (OverridesIgnored), not dropped silently.
 */
import type { ContainerResourcesSpec, Quantity, RSync } from "@driftless/api";
import { canonicalQuantity, parseQuantity } from "@driftless/objectmatcher";

export const ReconcilerContainer = "reconciler";
/** Config Sync's name for its render container, which driftless keeps. */
export const RenderContainer = "hydration-controller";
export type DriftlessContainer = typeof ReconcilerContainer | typeof RenderContainer;

/** Config Sync's container names, and the driftless container doing each one's work. */
export const ContainerFor: Readonly<Record<string, DriftlessContainer>> = {
  [ReconcilerContainer]: ReconcilerContainer,
  "git-sync": ReconcilerContainer,
  "oci-sync": ReconcilerContainer,
  "helm-sync": ReconcilerContainer,
  "gcenode-askpass-sidecar": ReconcilerContainer,
  "otel-agent": ReconcilerContainer,
  [RenderContainer]: RenderContainer,
};

function mapsTo(name: string | undefined, container: DriftlessContainer): boolean {
  return name !== undefined && Object.hasOwn(ContainerFor, name) && ContainerFor[name] === container;
}

/** Container names in `override.resources` and `override.logLevels` that no driftless container takes. */
export function unknownOverrideContainers(sync: RSync): string[] {
  const override = sync.spec.override;
  const names = [
    ...(override?.resources ?? []).map((r) => r.containerName ?? ""),
    ...(override?.logLevels ?? []).map((l) => l.containerName),
  ];
  return [...new Set(names.filter((n) => !Object.hasOwn(ContainerFor, n)))].sort();
}

type Amounts = Record<string, Quantity>;
const fields = [
  ["requests", "cpu", "cpuRequest"],
  ["requests", "memory", "memoryRequest"],
  ["limits", "cpu", "cpuLimit"],
  ["limits", "memory", "memoryLimit"],
] as const;

/**
 * A container's resources: its own entry over the defaults, plus the entries of the Config Sync
 * containers whose work it does.
 */
export function containerResources(
  sync: RSync,
  container: DriftlessContainer,
  defaults: { readonly requests: Readonly<Amounts>; readonly limits: Readonly<Amounts> },
): { requests: Amounts; limits: Amounts } {
  const entries = (sync.spec.override?.resources ?? []).filter((r) => mapsTo(r.containerName, container));
  const own = entries.find((r) => r.containerName === container);
  const others = entries.filter((r) => r !== own);
  const result = { requests: { ...defaults.requests }, limits: { ...defaults.limits } };
  for (const [kind, resource, field] of fields) {
    const value = own?.[field] ?? result[kind][resource];
    const added = others.map((r: ContainerResourcesSpec) => r[field]).filter((q) => q !== undefined);
    const total = value === undefined ? added : [value, ...added];
    if (total.length > 0) result[kind][resource] = sumQuantities(total);
  }
  return result;
}

/** A request above its limit, as the API server would refuse it in the pod template. */
export interface RequestAboveLimit {
  readonly resource: string;
  readonly request: Quantity;
  readonly limit: Quantity;
}

/**
 * The resources of a container whose request exceeds its limit (after the entries landing on it are
 * added up, over the defaults). The API server refuses such a pod template (422), so the manager
 * refuses the spec first. A quantity that cannot be read is left to the API server.
 */
export function requestsAboveLimits(resources: {
  readonly requests: Readonly<Amounts>;
  readonly limits: Readonly<Amounts>;
}): RequestAboveLimit[] {
  const found: RequestAboveLimit[] = [];
  for (const [resource, limit] of Object.entries(resources.limits)) {
    const request = resources.requests[resource];
    if (request === undefined) continue;
    const order = compareQuantities(request, limit);
    if (order !== undefined && order > 0) found.push({ resource, request, limit });
  }
  return found;
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`; undefined when either cannot be read. */
export function compareQuantities(a: Quantity, b: Quantity): number | undefined {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  if (x === undefined || y === undefined) return undefined;
  const exponent = Math.min(x.exponent, y.exponent);
  const mx = x.mantissa * 10n ** BigInt(x.exponent - exponent);
  const my = y.mantissa * 10n ** BigInt(y.exponent - exponent);
  return mx === my ? 0 : mx < my ? -1 : 1;
}

/** The sum as the API server would write it; the first value as given when any cannot be read. */
export function sumQuantities(values: readonly [Quantity, ...Quantity[]] | readonly Quantity[]): Quantity {
  const parsed = values.map((v) => parseQuantity(v));
  if (parsed.length === 1 || parsed.some((q) => q === undefined)) return values[0] ?? "0";
  const exact = parsed as NonNullable<(typeof parsed)[number]>[];
  const exponent = Math.min(...exact.map((q) => q.exponent));
  const mantissa = exact.reduce((sum, q) => sum + q.mantissa * 10n ** BigInt(q.exponent - exponent), 0n);
  // Whole multiples of 1024 written in binary (memory) stay binary; anything else is decimal, to the nano.
  if (exponent >= 0 && exact.every((q) => q.format === "BinarySI")) {
    const bytes = mantissa * 10n ** BigInt(exponent);
    if (bytes % 1024n === 0n) return canonicalQuantity(`${bytes / 1024n}Ki`) ?? `${bytes}`;
  }
  const nanos = exponent >= -9 ? mantissa * 10n ** BigInt(exponent + 9) : mantissa / 10n ** BigInt(-9 - exponent);
  return canonicalQuantity(`${nanos}n`) ?? values[0] ?? "0";
}

/**
 * A container's klog verbosity from `override.logLevels`: the highest of the entries whose work it
 * does (one asking for debug output gets it); undefined when none names it.
 */
export function containerVerbosity(sync: RSync, container: DriftlessContainer): number | undefined {
  const levels = (sync.spec.override?.logLevels ?? [])
    .filter((l) => mapsTo(l.containerName, container))
    .map((l) => l.logLevel);
  return levels.length === 0 ? undefined : Math.max(...levels);
}
