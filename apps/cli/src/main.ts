#!/usr/bin/env node
/** `driftless vet | diff | status`: driftless for people at a terminal. */
import { parseArgs } from "node:util";
import { isSyncKind } from "@driftless/api";
import { diff } from "./commands/diff.ts";
import { status } from "./commands/status.ts";
import { vet } from "./commands/vet.ts";

const usage = `usage:
  driftless vet DIR                         check manifests without a cluster (exit 1 on errors)
  driftless diff DIR [--kubeconfig PATH] [--sync-kind RootSync|RepoSync] [--sync-namespace NS] [--sync-name NAME]
                                            what a reconciler would change (exit 1 if anything)
  driftless status [--kubeconfig PATH]      every RootSync and RepoSync, one line each`;

async function main(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      kubeconfig: { type: "string" },
      "sync-kind": { type: "string", default: "RootSync" },
      "sync-namespace": { type: "string", default: "config-management-system" },
      "sync-name": { type: "string", default: "root-sync" },
      help: { type: "boolean", short: "h" },
    },
  });
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const [command, dir] = positionals;
  if (values.help === true || command === undefined) {
    out(usage);
    return command === undefined && values.help !== true ? 2 : 0;
  }
  const kubeconfig = values.kubeconfig ?? process.env["KUBECONFIG"];
  switch (command) {
    case "vet":
      if (dir === undefined) throw new UsageError("vet needs a directory");
      return vet(dir, out);
    case "diff": {
      if (dir === undefined) throw new UsageError("diff needs a directory");
      const kind = values["sync-kind"];
      if (!isSyncKind(kind)) throw new UsageError("--sync-kind must be RootSync or RepoSync");
      return diff(
        { dir, kubeconfig, sync: { kind, namespace: values["sync-namespace"], name: values["sync-name"] } },
        out,
      );
    }
    case "status":
      return status(kubeconfig, out);
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

class UsageError extends Error {}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`driftless: ${error instanceof Error ? error.message : String(error)}\n`);
    if (error instanceof UsageError) process.stderr.write(`${usage}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
