#!/usr/bin/env node
/**
 * driftless-resource-group-controller: the manager's ResourceGroup status controller as a process of its
 * own, under an identity that may read every kind (Config Sync's resource-group-controller-manager).
 */
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { StandaloneResourceGroupController } from "@driftless/controller";
import { createLogger, logCrashes } from "@driftless/sync";

const usage = `usage: driftless-resource-group-controller [--kubeconfig PATH] [--lease-namespace NS] [--lease-name NAME]
  [--identity ID] [--metrics-port N (default 8080; 0 picks a free one)] [--log-level debug|info|warn|error]
environment: KUBECONFIG, POD_NAMESPACE (lease namespace), POD_NAME (identity), METRICS_PORT, LOG_LEVEL`;

async function main(): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      options: Object.fromEntries(
        ["kubeconfig", "lease-namespace", "lease-name", "identity", "metrics-port", "log-level"].map((flag) => [
          flag,
          { type: "string" as const },
        ]),
      ),
      strict: true,
    }).values as Record<string, string | undefined>;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    return 2;
  }
  const env = process.env;
  const logLevel = values["log-level"] ?? env["LOG_LEVEL"] ?? "info";
  if (logLevel !== "debug" && logLevel !== "info" && logLevel !== "warn" && logLevel !== "error") {
    process.stderr.write(`--log-level must be debug, info, warn or error\n${usage}\n`);
    return 2;
  }
  const metricsPort = Number(values["metrics-port"] ?? env["METRICS_PORT"] ?? "8080");
  if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) {
    process.stderr.write(`--metrics-port must be a port number (0-65535)\n${usage}\n`);
    return 2;
  }
  const log = createLogger({ component: "resource-group-controller" }, { level: logLevel });
  logCrashes(log);
  const stopAsked = new Promise<void>((resolve) => {
    for (const signal of ["SIGTERM", "SIGINT"] as const)
      process.once(signal, () => {
        log.info("stopping", { signal });
        resolve();
      });
  });
  const controller = await StandaloneResourceGroupController.start({
    kubeconfig: values["kubeconfig"] ?? env["KUBECONFIG"],
    leaseNamespace: values["lease-namespace"] ?? env["POD_NAMESPACE"] ?? "resource-group-system",
    leaseName: values["lease-name"] ?? "driftless-resource-group-controller",
    identity: values["identity"] ?? env["POD_NAME"] ?? `${hostname()}_${process.pid}`,
    log,
    metricsPort,
  });
  log.info("resource-group-controller started", { metricsPort: controller.metricsPort });
  const outcome = await Promise.race([
    stopAsked.then(() => 0),
    controller.ended.then((end) => {
      // Another replica may lead now: exit, and the supervisor restarts this one as a standby.
      log.error("resource-group-controller ending", { reason: end.reason });
      return 1;
    }),
  ]);
  await controller.stop();
  return outcome;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    createLogger({ component: "resource-group-controller" }, { write: (line) => process.stderr.write(line) }).error(
      "resource-group-controller failed",
      { error: error instanceof Error ? error.message : String(error) },
    );
    process.exit(1);
  },
);
