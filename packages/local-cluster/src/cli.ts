#!/usr/bin/env node
/**
 * `npm run cluster:up` / `cluster:down` / `cluster:status`: the developer's local control plane.
 * Prints `export KUBECONFIG=...` on success; on failure one line that says what is missing, exit 1.
 */
import { defaultCrdDir, defaultStateDir } from "./paths.ts";
import { down, isHealthy, readState, up } from "./cluster.ts";

async function main(command: string | undefined): Promise<number> {
  const stateDir = process.env["DRIFTLESS_CLUSTER_DIR"] ?? defaultStateDir();
  switch (command) {
    case "up": {
      const started = Date.now();
      const state = await up({ stateDir, crdDir: defaultCrdDir(), detached: true });
      process.stderr.write(
        `local-cluster: ready at ${state.server} (${Date.now() - started} ms); logs in ${stateDir}/logs\n`,
      );
      process.stdout.write(`export KUBECONFIG=${state.kubeconfig}\n`);
      return 0;
    }
    case "down": {
      const stopped = await down(stateDir);
      process.stderr.write(
        `local-cluster: stopped ${stopped.map((p) => `${p.name} (${p.pid})`).join(", ") || "nothing (not running)"}\n`,
      );
      return 0;
    }
    case "status": {
      const state = await readState(stateDir);
      if (state === undefined) {
        process.stdout.write("local-cluster: not running\n");
        return 1;
      }
      const healthy = await isHealthy(state);
      process.stdout.write(
        `local-cluster: ${healthy ? "healthy" : "unhealthy"} at ${state.server}\nexport KUBECONFIG=${state.kubeconfig}\n`,
      );
      return healthy ? 0 : 1;
    }
    default:
      process.stderr.write("usage: cli.ts up|down|status\n");
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
