#!/usr/bin/env node
/**
 * `npm run cluster:up [-- --with-node]` / `cluster:down` / `cluster:status`: the developer's local
 * control plane, and `cli.ts import-image <archive>` to load a locally built image into its node.
 * Prints `export KUBECONFIG=...` on success; on failure one line that says what is missing, exit 1.
 */
import { defaultAdmissionPolicyFiles, defaultCrdDir, defaultStateDir } from "./paths.ts";
import { down, isHealthy, readState, up } from "./cluster.ts";
import { importImage } from "./node/containerd.ts";

async function main(command: string | undefined, args: readonly string[]): Promise<number> {
  const stateDir = process.env["DRIFTLESS_CLUSTER_DIR"] ?? defaultStateDir();
  switch (command) {
    case "up": {
      const started = Date.now();
      const withNode = args.includes("--with-node");
      const state = await up({
        stateDir,
        crdDir: defaultCrdDir(),
        admissionPolicyFiles: defaultAdmissionPolicyFiles(),
        detached: true,
        withNode,
      });
      process.stderr.write(
        `local-cluster: ready at ${state.server}${state.node ? ` with node ${state.node.name}` : ""} (${Date.now() - started} ms); logs in ${stateDir}/logs\n`,
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
        `local-cluster: ${healthy ? "healthy" : "unhealthy"} at ${state.server}` +
          (state.node ? ` with node ${state.node.name} (containerd ${state.node.containerdSocket})` : "") +
          `\nexport KUBECONFIG=${state.kubeconfig}\n`,
      );
      return healthy ? 0 : 1;
    }
    case "import-image": {
      const archive = args[0];
      if (archive === undefined) {
        process.stderr.write("usage: cli.ts import-image <image archive (OCI or docker save)>\n");
        return 2;
      }
      const names = await importImage(archive);
      process.stderr.write(`local-cluster: imported ${names.join(", ") || "no named image"} into the node\n`);
      return 0;
    }
    default:
      process.stderr.write("usage: cli.ts up [--with-node]|down|status|import-image <archive>\n");
      return 2;
  }
}

main(process.argv[2], process.argv.slice(3)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
