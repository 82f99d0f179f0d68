#!/usr/bin/env node
/** driftless-reconciler: one process per RootSync or RepoSync. Parses settings, runs, stops on SIGTERM/SIGINT. */
// First: a child of the manager stops when the manager is gone, even if loading the rest fails.
import "./parent-watch.ts";
import { redactCredentials } from "@driftless/api";
import { createLogger, logCrashes, Reconciler, sweepStaleTempFolders, waitForOlderReconcilers } from "@driftless/sync";
import { ConfigError, parseConfig, usage } from "./config.ts";
import { isRenderServer, parseRenderServerConfig, runRenderServer } from "./render-server.ts";

async function main(): Promise<number> {
  logCrashes(createLogger({ component: "reconciler" }));
  const argv = process.argv.slice(2);
  let config;
  let renderServer;
  try {
    // The render container of a reconciler pod runs this same program in its own mode.
    if (isRenderServer(argv)) renderServer = parseRenderServerConfig(argv, process.env);
    else config = parseConfig(argv, process.env);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    return error instanceof ConfigError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") ? 2 : 1;
  }
  if (renderServer !== undefined) return runRenderServer(renderServer);
  if (config === undefined) return 2;
  const log = createLogger(
    { component: "reconciler", sync: `${config.syncKind}/${config.syncNamespace}/${config.syncName}` },
    { level: config.logLevel },
  );
  logCrashes(log);
  // Before start: a SIGTERM while it runs (the manager replacing a reconciler just started) would
  // otherwise end the process by the signal; now it stops as soon as the start is done.
  const stopAsked = stopSignal(log);
  // A previous leader's reconciler may still run on this state folder: what it holds is not ours to remove.
  const stopping = new AbortController();
  void stopAsked.then(() => stopping.abort());
  // It keeps its start slot in the manager meanwhile: the start gate's hold limit (30 s) bounds a frozen one.
  await waitForOlderReconcilers(process.env, log, stopping.signal);
  if (stopping.signal.aborted) return 0;
  // Renders and key files a killed predecessor (SIGKILL, OOM) left in a temp folder of this process's own.
  await sweepStaleTempFolders(process.env, log);
  const reconciler = await Reconciler.start({
    identity: { kind: config.syncKind, namespace: config.syncNamespace, name: config.syncName },
    kubeconfig: config.kubeconfig,
    redisUrl: config.redisUrl,
    cacheDir: config.cacheDir,
    allowFileTransport: config.allowFileRepos,
    ...(config.renderToolsDir === undefined ? {} : { renderToolsDir: config.renderToolsDir }),
    // Deployment mode: the pod's render container renders, and only a source that needs it gets one.
    ...(config.renderSocket === undefined ? {} : { renderSocket: config.renderSocket }),
    allowRepoSyncShellInRendering: config.allowRepoSyncShellInRendering,
    ...(config.resyncPeriodMs === undefined ? {} : { resyncPeriodMs: config.resyncPeriodMs }),
    ...(config.clusterName === undefined ? {} : { clusterName: config.clusterName }),
    apiServerTimeoutMs: config.apiServerTimeoutMs,
    log,
    ...(config.metricsPort === undefined ? {} : { metricsPort: config.metricsPort }),
    ...(config.queuePrefix === undefined ? {} : { queuePrefix: config.queuePrefix }),
  });
  if (reconciler.metricsUrl !== undefined) log.info("serving metrics", { url: `${reconciler.metricsUrl}/metrics` });
  // Frees this start's slot in the manager (process mode), so the next reconciler may start.
  process.send?.({ type: "ready" });
  await stopAsked;
  await reconciler.stop();
  return 0;
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

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      // Written by hand (the logger may not exist yet), so masked by hand: a repo URL may carry a token.
      `${JSON.stringify({ level: "error", msg: "reconciler failed", error: redactCredentials(error instanceof Error ? error.message : String(error)) })}\n`,
    );
    process.exit(1);
  },
);
