/**
 * Node's flags for a reconciler, in either mode. V8 sizes its heap for the machine, not for the
 * process: on a 24 GiB laptop it lets the old generation grow to four times what is live before it
 * collects, beside a young generation of up to 3 × 16 MiB. A reconciler holds little (~50 MiB at
 * 10,000 objects) but allocates a lot in bursts (a read of the whole source, a write per object), so
 * its resident memory would follow the bursts, not what it holds. A heap limit below 1 GiB makes V8
 * grow the heap by a smaller factor, and 4 MiB semi-spaces bound the young generation. Measured at
 * 10,000 ConfigMaps (docs/benchmarks.md): peak RSS 300 → 194 MiB, apply throughput unchanged; 1 MiB
 * semi-spaces saved nothing more and spent 16% of the apply step in the scavenger.
 *
 * glibc gives every thread that allocates its own malloc arena; Node's libuv and V8 worker threads
 * each kept ~5 MiB that way. Two arenas (one per core of a small node) cost no measurable speed.
 * glibc also raises its mmap threshold to the largest block freed so far, so after the first
 * megabyte-sized response (the ResourceGroup at 10,000 objects) such blocks come from the heap and
 * stay resident after they are freed; a fixed 128 KiB threshold (and trimming) hands them back.
 * Together: peak RSS at 10,000 ConfigMaps 190–200 → 164–172 MiB, throughput unchanged.
 *
 * `--expose-gc` lets the reconciler start a major collection after each full pass (@driftless/sync
 * collectAfterPass): back-to-back passes over 10,000 objects otherwise left their garbage in the old
 * generation until it had doubled, and RSS climbed from ~131 to ~150 MiB. On a small heap it asks for
 * the memory-reducing collection instead, which gives the semi-spaces back: an idle small sync's PSS
 * 44 → 34 MiB.
 */
import { parseQuantity } from "@driftless/objectmatcher";

/** The reconciler container's memory limit when the RSync does not override it (deployment-spec.ts). */
export const DefaultReconcilerMemoryLimit = "512Mi";
/** Share of the memory limit given to V8's old generation; the rest is code, buffers and native memory. */
const heapShareOfLimit = 0.75;
/** Below this V8 would stop a large sync with an out-of-memory crash rather than run slowly. */
const minimumHeapMiB = 128;

/**
 * `--max-old-space-size` from the reconciler's memory limit (a Kubernetes quantity), so a sync given
 * more memory in `spec.override.resources` also gets a larger heap, in process mode as in a pod.
 */
export function reconcilerNodeFlags(memoryLimit: string | number = DefaultReconcilerMemoryLimit): string[] {
  const parsed = parseQuantity(memoryLimit);
  const bytes = parsed === undefined ? Number.NaN : Number(parsed.mantissa) * 10 ** parsed.exponent;
  const limitMiB = Number.isFinite(bytes) && bytes > 0 ? bytes / 2 ** 20 : 512;
  const heapMiB = Math.max(minimumHeapMiB, Math.floor(limitMiB * heapShareOfLimit));
  return ["--max-semi-space-size=4", `--max-old-space-size=${heapMiB}`, "--expose-gc"];
}

/** Environment for a reconciler process or container, beside the flags. */
export const reconcilerEnvironment: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "131072",
  MALLOC_TRIM_THRESHOLD_: "131072",
};

/** The manager container's memory limit (manifests/manager.yaml). */
export const ManagerMemoryLimit = "384Mi";

/**
 * Node's flags for the manager (manifests/manager.yaml, the benches). Its live heap is small (~25 MiB
 * at 1,000 syncs) but it allocates steadily (each job's requests and responses, informer events), and
 * by default V8 let the young generation grow to 64, then 128 MiB; no `--expose-gc`: nothing in the
 * manager knows when a collection would pay. Figures in docs/design/manager.md.
 */
export function managerNodeFlags(memoryLimit: string | number = ManagerMemoryLimit): string[] {
  return reconcilerNodeFlags(memoryLimit).filter((flag) => flag !== "--expose-gc");
}

/** Environment for the manager, beside the flags: the same allocator settings as a reconciler's. */
export const managerEnvironment: Readonly<Record<string, string>> = reconcilerEnvironment;
