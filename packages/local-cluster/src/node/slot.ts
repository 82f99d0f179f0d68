import { existsSync } from "node:fs";
import { mkdir, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { nodeRuntimeDir } from "../paths.ts";
import { isAlive, type ProcessRecord } from "../processes.ts";

export const slotOwnerFileName = "owner";
const ownerFile = join(nodeRuntimeDir, slotOwnerFileName);

interface RecordedNode {
  readonly processes: readonly ProcessRecord[];
}

/** How the slot reads a cluster's recorded node and removes a dead one's leftovers. */
export interface NodeLookup<N extends RecordedNode> {
  readonly nodeOf: (stateDir: string) => Promise<N | undefined>;
  readonly cleanUp: (node: N) => Promise<void>;
}

/** Who holds the machine's node slot: the cluster, and the process that claimed it (alive while it starts the node). */
interface SlotOwner {
  readonly stateDir: string;
  readonly pid: number;
}

/**
 * One node per machine: the bridge, the kubelet's port and kube-proxy's chains are host-wide. While
 * another cluster's node starts or runs, waits up to `waitMs` for it to go, then refuses; a slot left
 * by a dead node is cleaned and taken.
 */
export async function claimNodeSlot<N extends RecordedNode>(
  stateDir: string,
  waitMs: number,
  nodes: NodeLookup<N>,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const owner = await readSlotOwner();
    if (owner === undefined || owner.stateDir === stateDir || !(await slotOwnerAlive(owner, nodes))) {
      const stale = owner === undefined ? undefined : await nodes.nodeOf(owner.stateDir);
      if (stale !== undefined) await nodes.cleanUp(stale);
      break;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `local-cluster: a node already runs on this machine, for the cluster in ${owner.stateDir}; stop it with cluster:down first`,
      );
    }
    await delay(1_000);
  }
  await mkdir(nodeRuntimeDir, { recursive: true });
  await writeFile(ownerFile, JSON.stringify({ stateDir, pid: process.pid } satisfies SlotOwner) + "\n");
}

async function readSlotOwner(): Promise<SlotOwner | undefined> {
  if (!existsSync(ownerFile)) return undefined;
  try {
    return JSON.parse(await readFile(ownerFile, "utf8")) as SlotOwner;
  } catch {
    return undefined; // half-written or from an older layout: nobody we can ask
  }
}

async function slotOwnerAlive<N extends RecordedNode>(owner: SlotOwner, nodes: NodeLookup<N>): Promise<boolean> {
  if (isAlive(owner.pid)) return true;
  const node = await nodes.nodeOf(owner.stateDir);
  return node !== undefined && node.processes.some((p) => isAlive(p.pid));
}

/** Releases the machine's node slot if this cluster holds it. */
export async function releaseNodeSlot(stateDir: string): Promise<void> {
  if ((await readSlotOwner())?.stateDir !== stateDir) return;
  await rm(ownerFile, { force: true });
  // The runtime folder goes with the last thing in it; a node starting meanwhile keeps it.
  await rmdir(nodeRuntimeDir).catch(() => undefined);
}
