import { spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "./paths.ts";

export interface Binaries {
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
}

/**
 * Returns the control-plane binaries, building them from the Go module proxy on first use
 * (scripts/build.sh caches them by version, so later calls return at once).
 * Build progress goes to stderr; a missing Go or proxy fails with the script's one-line reason.
 */
export async function ensureBinaries(options: { readonly quiet?: boolean } = {}): Promise<Binaries> {
  const dir = await runBuild("control-plane", options);
  return {
    dir,
    etcd: join(dir, "etcd"),
    kubeApiserver: join(dir, "kube-apiserver"),
    kubeControllerManager: join(dir, "kube-controller-manager"),
  };
}

export interface NodeBinaries {
  readonly dir: string;
  readonly kubelet: string;
  readonly kubeScheduler: string;
  readonly kubeProxy: string;
  /** The pod sandbox's only process, packed into the pause image. */
  readonly pause: string;
}

/** Returns the node's binaries, built like the control plane's on first use (`build.sh node`). */
export async function ensureNodeBinaries(options: { readonly quiet?: boolean } = {}): Promise<NodeBinaries> {
  const dir = await runBuild("node", options);
  return {
    dir,
    kubelet: join(dir, "kubelet"),
    kubeScheduler: join(dir, "kube-scheduler"),
    kubeProxy: join(dir, "kube-proxy"),
    pause: join(dir, "pause"),
  };
}

async function runBuild(what: "control-plane" | "node", options: { readonly quiet?: boolean }): Promise<string> {
  const script = join(packageRoot, "scripts", "build.sh");
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  // Progress is shown one line behind, so that on failure the last line (the reason) is shown once,
  // as the error, and not also as progress.
  let partial = "";
  let pending: string | undefined;
  const show = (line: string): void => {
    if (options.quiet !== true) process.stderr.write(`${line}\n`);
  };
  const code = await new Promise<number>((resolveExit, reject) => {
    const child = spawn("bash", [script, what], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (c: Buffer) => stdout.push(c));
    child.stderr.on("data", (c: Buffer) => {
      stderr.push(c);
      const lines = (partial + c.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (pending !== undefined) show(pending);
        pending = line;
      }
    });
    child.once("error", reject);
    child.once("exit", (exitCode) => resolveExit(exitCode ?? 1));
  });
  if (code === 0) {
    if (pending !== undefined) show(pending);
    if (partial !== "") show(partial);
  }
  if (code !== 0) {
    const lastLine = Buffer.concat(stderr).toString("utf8").trim().split("\n").at(-1) ?? "";
    throw new Error(
      lastLine.startsWith("local-cluster:") ? lastLine : `local-cluster: building the ${what} failed: ${lastLine}`,
    );
  }
  return Buffer.concat(stdout).toString("utf8").trim().split("\n").at(-1) ?? "";
}
