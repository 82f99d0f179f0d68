/**
 * `driftless-reconciler --render-server SOCKET`: the render container of a reconciler pod
 * (hydration-controller). It holds no ServiceAccount token and no Redis credential, and renders the
 * checkouts its reconciler asks for, read from the shared cache volume.
 */
import { parseArgs } from "node:util";
import { createLogger, sweepStaleTempFolders } from "@driftless/sync";
import { defaultRenderToolsDir, serveRenders } from "@driftless/sync/render";
import { ConfigError } from "./config.ts";

export interface RenderServerConfig {
  readonly socketPath: string;
  /** Only directories under here are rendered: the checkout volume (default DRIFTLESS_CACHE_DIR). */
  readonly sourceRoot: string;
  readonly renderToolsDir: string | undefined;
  readonly logLevel: "debug" | "info" | "warn" | "error";
}

export function isRenderServer(argv: readonly string[]): boolean {
  return argv.some((a) => a === "--render-server" || a.startsWith("--render-server="));
}

export function parseRenderServerConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): RenderServerConfig {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      "render-server": { type: "string" },
      "render-source-root": { type: "string" },
      "render-tools-dir": { type: "string" },
      "log-level": { type: "string" },
    },
    strict: true,
  });
  const socketPath = values["render-server"];
  if (socketPath === undefined || socketPath === "") throw new ConfigError("--render-server needs a socket path");
  const sourceRoot = values["render-source-root"] ?? env["DRIFTLESS_RENDER_SOURCE_ROOT"] ?? env["DRIFTLESS_CACHE_DIR"];
  if (sourceRoot === undefined || sourceRoot === "")
    throw new ConfigError("--render-server needs --render-source-root (DRIFTLESS_RENDER_SOURCE_ROOT): the checkouts");
  const logLevel = values["log-level"] ?? env["LOG_LEVEL"] ?? "info";
  if (logLevel !== "debug" && logLevel !== "info" && logLevel !== "warn" && logLevel !== "error")
    throw new ConfigError("--log-level must be debug, info, warn or error");
  return {
    socketPath,
    sourceRoot,
    renderToolsDir: values["render-tools-dir"] ?? env["DRIFTLESS_RENDER_TOOLS_DIR"] ?? defaultRenderToolsDir(),
    logLevel,
  };
}

/** Serves until SIGTERM or SIGINT. */
export async function runRenderServer(config: RenderServerConfig): Promise<number> {
  const log = createLogger({ component: "render-server" }, { level: config.logLevel });
  // A render a killed predecessor (OOM: the large ones) left in the container's /tmp, which outlives it.
  await sweepStaleTempFolders(process.env, log);
  const server = await serveRenders({
    socketPath: config.socketPath,
    sourceRoot: config.sourceRoot,
    tools: { dir: config.renderToolsDir },
    log,
  });
  const signal = await new Promise<string>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  log.info("stopping", { signal });
  await server.close();
  return 0;
}
