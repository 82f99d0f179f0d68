/**
 * `process` mode: one supervised child process per sync running `driftless-reconciler`, with a
 * kubeconfig holding a token of the reconciler's own ServiceAccount. Local mode for laptops and
 * CI; the children live and die with the manager.
 */
import { rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { reconcilerName, RootSyncNamespace, type RSync } from "@driftless/api";
import type { KubeClient } from "@driftless/kube";
import { ReconcilerState } from "@driftless/metrics";
import type { SyncRef } from "@driftless/queue";
import { PrivateTmpdirEnv, type Logger } from "@driftless/sync";
import { DefaultRestartBackoff, type BackoffPolicy } from "./backoff.ts";
import { heartbeatTiming, type HeartbeatTiming } from "./child-heartbeat.ts";
import { writeKubeconfig, type ClusterAccess } from "./credentials.ts";
import { ensureIdentity, removeIdentity } from "./identity.ts";
import { reconcilerMemoryLimit } from "./deployment-spec.ts";
import { KeyedLock } from "./keyed-lock.ts";
import { leaderElectionTimings } from "./leader-election.ts";
import { reconcilerEnvironment, reconcilerNodeFlags } from "./node-flags.ts";
import { planIdentity } from "./rbac-plan.ts";
import { ensurePrivateDir, ensurePrivateDirSync } from "./private-dir.ts";
import { newRedisPassword, type ReconcilerRedisUsers } from "./redis-users.ts";
import { nameOf, ReconcilerNameTakenError, serviceAccountHolder } from "./reconciler-name.ts";
import { overrideArgs, reconcilerOverrides, type ReconcilerOverrides } from "./reconciler-overrides.ts";
import { specHash } from "./spec-hash.ts";
import { StartGate } from "./start-gate.ts";
import { ProcessState, SupervisedProcess, type LaunchSpec } from "./supervisor.ts";
import { TokenRotation } from "./token-rotation.ts";
import { ReconcilerMode, syncKeyOf, syncRefOf, type ReconcilerWorkload, type WorkloadStatus } from "./workload.ts";

export interface ProcessWorkloadOptions {
  readonly client: KubeClient;
  readonly access: ClusterAccess;
  /** Per-reconciler kubeconfigs, logs and git caches live under here. */
  readonly stateDir: string;
  /** The reconciler's entry point (apps/reconciler's `driftless-reconciler` bin). */
  readonly reconcilerEntry: string;
  /** Redis without credentials: each child authenticates as its own ACL user (redisUsers). */
  readonly redisUrl: string;
  readonly redisUsers: ReconcilerRedisUsers;
  readonly queuePrefix: string | undefined;
  readonly allowFileRepos: boolean;
  /** Passed on, so a reconciler refuses a RepoSync's shell in rendering on its own too (defence in depth). */
  readonly allowRepoSyncShellInRendering?: boolean;
  readonly logLevel: string;
  /** This cluster's name, for cluster selectors (the reconciler's `--cluster-name`). */
  readonly clusterName?: string;
  readonly log: Logger;
  /** Called when a child's state changes, so the manager can update the sync's status. */
  readonly onStateChange?: (sync: SyncRef) => void;
  /** A sync's reconciler is first supervised, restarts after an exit, or is removed (restart metrics). */
  readonly onLifecycle?: (sync: SyncRef, event: ReconcilerLifecycle) => void;
  readonly restartBackoff?: BackoffPolicy;
  readonly stopGraceMs?: number;
  readonly stableAfterMs?: number;
  /** Requested token lifetime (default 1 h); the token file is renewed at half of it. */
  readonly tokenSeconds?: number;
  /** Reconcilers that may be starting at once (default: 2 per CPU, at least 4). */
  readonly maxConcurrentStarts?: number;
  /** Heartbeats to each child (default: from the default leader election timings). */
  readonly heartbeat?: HeartbeatTiming;
}

/** What driftless_reconciler_restarts_total follows of a sync's reconciler. */
export type ReconcilerLifecycle = "supervised" | "restarting" | "removed";

interface Child {
  /** The sync it runs for; its state folder is named after its reconciler name. */
  readonly sync: SyncRef;
  /** specHash of the spec the process was started for. */
  readonly hash: string;
  /** Node's flags: the heap sized from the sync's reconciler memory limit, as in deployment mode. */
  readonly nodeFlags: readonly string[];
  /** spec.override's apiServerTimeout and reconciler log level, as in deployment mode. */
  readonly overrides: ReconcilerOverrides;
  readonly process: SupervisedProcess;
  readonly token: TokenRotation;
  /** The password of the running child's Redis user: new at every start (rotation), kept to re-create the user. */
  readonly redis: { password: string | undefined };
}

export class ProcessWorkload implements ReconcilerWorkload {
  readonly mode = ReconcilerMode.Process;
  readonly #options: ProcessWorkloadOptions;
  readonly #children = new Map<string, Child>();
  readonly #lock = new KeyedLock();
  readonly #gate: StartGate;
  readonly #onExit = (): void => {
    for (const child of this.#children.values()) child.process.killNow();
  };

  constructor(options: ProcessWorkloadOptions) {
    // Refuses to start on a state folder another local user could read or fill (a shared /tmp).
    ensurePrivateDirSync(options.stateDir);
    this.#options = options;
    this.#gate = new StartGate(options.maxConcurrentStarts ?? Math.max(4, 2 * availableParallelism()));
    // Graceful shutdown stops children through close(); this covers a crash of the manager.
    process.on("exit", this.#onExit);
  }

  ensure(sync: RSync): Promise<WorkloadStatus> {
    const ref = syncRefOf(sync);
    // By reconciler name: two syncs of one name are never set up at once, so the second sees the first's.
    return this.#lock.run(nameOf(ref), async () => {
      // Another sync of the same reconciler name runs here: its state folder and identity are not ours.
      const running = this.#holderOf(ref);
      if (running !== undefined) throw new ReconcilerNameTakenError(ref, nameOf(ref), running);
      await ensureIdentity(this.#options.client, ref, planIdentity(sync));
      const hash = specHash(sync);
      const key = syncKeyOf(ref);
      const existing = this.#children.get(key);
      if (existing !== undefined && existing.hash === hash) {
        // Redis may have lost the user (restart, no persistence): the running child gets it back as it was.
        const password = existing.redis.password;
        if (password !== undefined) await this.#options.redisUsers.ensure(ref, password, { only: false });
        return statusOf(existing.process);
      }
      if (existing !== undefined) {
        this.#options.log.info("the sync's spec changed: restarting its reconciler", { sync: key });
        await this.#stop(existing);
        this.#children.delete(key);
      }
      const child: Child = {
        sync: ref,
        hash,
        nodeFlags: reconcilerNodeFlags(reconcilerMemoryLimit(sync)),
        overrides: reconcilerOverrides(sync),
        process: this.#supervise(ref),
        token: this.#tokenFor(ref),
        redis: { password: undefined },
      };
      this.#children.set(key, child);
      if (existing === undefined) this.#options.onLifecycle?.(ref, "supervised");
      child.process.start();
      return statusOf(child.process);
    });
  }

  running(sync: SyncRef): Promise<WorkloadStatus | undefined> {
    const child = this.#children.get(syncKeyOf(sync));
    return Promise.resolve(child === undefined ? undefined : statusOf(child.process));
  }

  teardown(sync: SyncRef): Promise<undefined> {
    const key = syncKeyOf(sync);
    return this.#lock.run(nameOf(sync), async () => {
      const child = this.#children.get(key);
      if (child !== undefined) {
        await this.#stop(child);
        this.#children.delete(key);
      }
      this.#options.onLifecycle?.(sync, "removed");
      // The state folder and the identity go by the reconciler name: another sync holding it keeps them.
      const heldByAnother =
        (this.#holderOf(sync) ?? (await serviceAccountHolder(this.#options.client, sync))) !== undefined;
      if (!heldByAnother) await rm(this.#dirOf(sync), { recursive: true, force: true });
      await this.#options.redisUsers.remove(sync);
      await removeIdentity(this.#options.client, sync, { keepNamed: heldByAnother });
      return undefined;
    });
  }

  /** Another sync whose reconciler, of the same name as `sync`'s, this manager runs. */
  #holderOf(sync: SyncRef): SyncRef | undefined {
    const key = syncKeyOf(sync);
    const name = nameOf(sync);
    for (const [other, child] of this.#children) if (other !== key && nameOf(child.sync) === name) return child.sync;
    return undefined;
  }

  states(): ReadonlyMap<ReconcilerState, number> {
    const counts = new Map<ReconcilerState, number>();
    for (const child of this.#children.values()) {
      const state = metricState(child.process.state);
      if (state !== undefined) counts.set(state, (counts.get(state) ?? 0) + 1);
    }
    return counts;
  }

  /** Stops every child; their identities stay, so the next manager starts them again without setup. */
  async close(): Promise<void> {
    await Promise.all([...this.#children.values()].map((c) => this.#stop(c)));
    this.#children.clear();
    process.off("exit", this.#onExit);
  }

  async #stop(child: Child): Promise<void> {
    child.token.stop();
    await child.process.stop();
  }

  #tokenFor(sync: SyncRef): TokenRotation {
    const o = this.#options;
    return new TokenRotation({
      client: o.client,
      namespace: RootSyncNamespace,
      serviceAccount: reconcilerName(sync.kind, sync.namespace, sync.name),
      file: tokenFileOf(this.#dirOf(sync)),
      seconds: o.tokenSeconds ?? 3600,
      log: o.log,
    });
  }

  #dirOf(sync: SyncRef): string {
    return join(this.#options.stateDir, reconcilerName(sync.kind, sync.namespace, sync.name));
  }

  #supervise(sync: SyncRef): SupervisedProcess {
    const name = reconcilerName(sync.kind, sync.namespace, sync.name);
    const dir = this.#dirOf(sync);
    return new SupervisedProcess({
      name,
      logFile: join(dir, "reconciler.log"),
      backoff: this.#options.restartBackoff ?? DefaultRestartBackoff,
      stableAfterMs: this.#options.stableAfterMs ?? 3_000,
      stopGraceMs: this.#options.stopGraceMs ?? 10_000,
      log: this.#options.log,
      prepare: () => this.#prepare(sync, name, dir),
      onStateChange: () => this.#options.onStateChange?.(sync),
      onRestart: () => this.#options.onLifecycle?.(sync, "restarting"),
      gate: this.#gate,
      heartbeat: this.#options.heartbeat ?? heartbeatTiming(leaderElectionTimings()),
    });
  }

  /**
   * Runs before every (re)start: a fresh token and kubeconfig, and a fresh Redis password (the
   * previous child is gone, so the old one is dropped), so a restart never runs on stale credentials.
   */
  async #prepare(sync: SyncRef, name: string, dir: string): Promise<LaunchSpec> {
    const o = this.#options;
    // Again at every start: a /tmp cleaner may have removed the folders, and another user re-made them.
    for (const folder of [o.stateDir, dir, join(dir, "cache"), tmpDirOf(dir)]) await ensurePrivateDir(folder);
    const child = this.#children.get(syncKeyOf(sync));
    if (child === undefined) throw new Error(`${name} is no longer wanted`);
    await child.token.renew();
    const kubeconfig = join(dir, "kubeconfig");
    await writeKubeconfig(kubeconfig, o.access, name, tokenFileOf(dir));
    const password = newRedisPassword();
    await o.redisUsers.ensure(sync, password, { only: true });
    child.redis.password = password;
    const args = [
      ...child.nodeFlags,
      o.reconcilerEntry,
      "--kubeconfig",
      kubeconfig,
      "--sync-kind",
      sync.kind,
      "--sync-name",
      sync.name,
      "--sync-namespace",
      sync.namespace,
      "--cache-dir",
      join(dir, "cache"),
      "--log-level",
      child.overrides.logLevel ?? o.logLevel,
      ...overrideArgs(child.overrides),
      ...(o.queuePrefix === undefined ? [] : ["--queue-prefix", o.queuePrefix]),
      ...(o.allowFileRepos ? ["--allow-file-repos"] : []),
      ...(o.allowRepoSyncShellInRendering === true ? ["--allow-reposync-shell-in-rendering"] : []),
      ...(o.clusterName === undefined ? [] : ["--cluster-name", o.clusterName]),
    ];
    return {
      command: process.execPath,
      args,
      env: childEnvironment(o.redisUrl, o.redisUsers.username(sync), password, tmpDirOf(dir)),
    };
  }
}

/**
 * What a reconciler child's environment changes of the manager's, which it otherwise inherits. The Redis
 * credential goes here, not in argv, which `ps` shows to everyone. METRICS_PORT is the manager's own port
 * (docker-compose sets it so): inherited, every child bound it and failed with EADDRINUSE. A TMPDIR of its
 * own (`tmpDir`, in its state folder) lets a child remove at start what a killed predecessor left there.
 */
export function childEnvironment(
  redisUrl: string,
  username: string,
  password: string,
  tmpDir: string,
): Record<string, string> {
  return {
    ...reconcilerEnvironment,
    METRICS_PORT: "",
    REDIS_URL: redisUrl,
    REDIS_USERNAME: username,
    REDIS_PASSWORD: password,
    TMPDIR: tmpDir,
    [PrivateTmpdirEnv]: "true",
  };
}

function tokenFileOf(dir: string): string {
  return join(dir, "token");
}

/** A child's temp folder: removed with its state folder at teardown. */
function tmpDirOf(dir: string): string {
  return join(dir, "tmp");
}

function statusOf(process: SupervisedProcess): WorkloadStatus {
  const ready = process.state === ProcessState.Running;
  const failure = ready ? undefined : process.failure;
  if (failure !== undefined) {
    const times = failure.failures === 1 ? "once" : `${failure.failures} times in a row`;
    return {
      ready,
      reason: "Process",
      message: `Reconciler process ${process.name} is ${process.state}`,
      failure: `reconciler process ${process.name} failed ${times}; last: ${failure.reason}`,
    };
  }
  const message = ready
    ? `Reconciler process ${process.name} is running (pid ${process.pid ?? "?"})`
    : `Reconciler process ${process.name} is ${process.state}`;
  return { ready, reason: "Process", message };
}

function metricState(state: ProcessState): ReconcilerState | undefined {
  switch (state) {
    case ProcessState.Starting:
      return ReconcilerState.Starting;
    case ProcessState.Running:
      return ReconcilerState.Running;
    case ProcessState.Failed:
      return ReconcilerState.Failed;
    case ProcessState.Terminating:
      return ReconcilerState.Terminating;
    case ProcessState.Stopped:
      return undefined;
  }
}
