#!/usr/bin/env node
/** driftless-manager: parses settings, runs the Manager, stops gracefully on SIGTERM/SIGINT. */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AdmissionWebhook, Manager, ReconcilerMode, removeAdmissionWebhook } from "@driftless/controller";
import { createLogger, logCrashes } from "@driftless/sync";
import { ConfigError, parseConfig, usage } from "./config.ts";

/**
 * The reconciler's entry point: beside the manager when it runs from the bundle (dist/, see
 * scripts/bundle.ts), else as its package declares it (its `driftless-reconciler` bin).
 */
function reconcilerEntry(): string {
  const self = fileURLToPath(import.meta.url);
  if (self.endsWith(".mjs")) return join(dirname(self), "driftless-reconciler.mjs");
  let dir = dirname(fileURLToPath(import.meta.resolve("@driftless/reconciler")));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        bin?: Record<string, string>;
      };
      const bin = pkg.bin?.["driftless-reconciler"];
      if (pkg.name === "@driftless/reconciler" && bin !== undefined) return join(dir, bin);
    } catch {
      // No package.json here: keep climbing.
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot find the driftless-reconciler entry point of @driftless/reconciler");
    dir = parent;
  }
}

async function main(): Promise<number> {
  let config;
  try {
    config = parseConfig(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    return error instanceof ConfigError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") ? 2 : 1;
  }
  const log = createLogger({ component: "manager" }, { level: config.logLevel });
  logCrashes(log);
  // Before anything starts: a SIGTERM during the start (a rollout replacing a replica just started) would
  // otherwise end the process by the signal; now the manager stops as soon as its start is done.
  const stopAsked = stopSignal(log);
  // Before the manager: a webhook that cannot start (its RBAC missing) stops the process before any reconciler runs.
  const admission = await startAdmission(config, log);
  const manager = await Manager.start({
    kubeconfig: config.kubeconfig,
    redisUrl: config.redisUrl,
    mode: config.reconcilerMode === "deployment" ? ReconcilerMode.Deployment : ReconcilerMode.Process,
    metricsPort: config.metricsPort,
    webhook:
      config.webhookPort === undefined || config.webhookSecret === undefined
        ? undefined
        : { port: config.webhookPort, secret: config.webhookSecret },
    queuePrefix: config.queuePrefix,
    allowFileRepos: config.allowFileRepos,
    allowRepoSyncShellInRendering: config.allowRepoSyncShellInRendering,
    syncSelector: config.syncSelector,
    ...(config.resourceGroupController === undefined
      ? {}
      : { resourceGroupController: config.resourceGroupController }),
    leaseName: config.leaseName,
    identity: config.identity,
    stateDir: config.stateDir,
    reconcilerEntry: config.reconcilerMode === "process" ? reconcilerEntry() : "",
    deployment:
      config.reconcilerMode === "deployment"
        ? {
            image: config.reconcilerImage,
            redisUrl: config.reconcilerRedisUrl,
          }
        : undefined,
    resyncMs: config.resyncSeconds * 1000,
    ...(config.clusterName === undefined ? {} : { clusterName: config.clusterName }),
    logLevel: config.logLevel,
    ...(config.maxConcurrentStarts === undefined ? {} : { maxConcurrentStarts: config.maxConcurrentStarts }),
    log,
  });
  const outcome = await Promise.race([
    stopAsked.then(() => 0),
    manager.ended.then((end) => {
      // Another replica may already lead: stop everything and let the supervisor restart us as a standby.
      log.error("manager ending", { reason: end.reason });
      return 1;
    }),
  ]);
  await admission?.close();
  await manager.stop();
  return outcome;
}

/** Resolves at the first SIGTERM or SIGINT, which it logs. */
function stopSignal(log: ReturnType<typeof createLogger>): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      log.info("stopping", { signal });
      resolve();
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
}

/**
 * Admission protection when turned on; when off, its configuration is deleted so the API server stops
 * calling. Every replica serves it.
 */
async function startAdmission(
  config: ReturnType<typeof parseConfig>,
  log: ReturnType<typeof createLogger>,
): Promise<AdmissionWebhook | undefined> {
  const settings = config.admissionWebhook;
  if (settings === undefined) {
    await removeAdmissionWebhook(config.kubeconfig, log).catch((error: unknown) =>
      log.warn("could not remove the admission webhook configuration", { error: String(error) }),
    );
    return undefined;
  }
  // Process mode runs beside the API server; in a cluster the API server calls the manager's Service (port 443).
  const url = settings.url;
  return AdmissionWebhook.start({
    kubeconfig: config.kubeconfig,
    port: settings.port,
    endpoint:
      url !== undefined
        ? () => ({ url })
        : config.reconcilerMode === "process"
          ? (port) => ({ url: `https://127.0.0.1:${port}/admission-webhook` })
          : () => ({ service: { namespace: "config-management-system", name: "reconciler-manager", port: 443 } }),
    log,
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // On stderr, redacted like every log line: a Redis or repository URL in the message may carry a password.
    createLogger({ component: "manager" }, { write: (line) => process.stderr.write(line) }).error("manager failed", {
      error: error instanceof Error ? error.message : String(error),
    });
    process.exit(1);
  },
);
