#!/usr/bin/env node
/** `driftless vet | hydrate | diff | status | console | sync | suspend | resume | version`: driftless for people at a terminal. */
import { existsSync } from "node:fs";
import { delimiter } from "node:path";
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { isSyncKind, SourceFormat } from "@driftless/api";
import { parseDuration } from "@driftless/api";
import { kubeconfigNamespace } from "@driftless/kube";
import { sourceFormatFor } from "@driftless/source";
import { consoleCommand } from "./commands/console.ts";
import { diff } from "./commands/diff.ts";
import { hydrate, OutputFormat as HydrateFormat } from "./commands/hydrate.ts";
import { lever } from "./commands/levers.ts";
import { onRendered } from "./commands/rendered.ts";
import { status } from "./commands/status.ts";
import { OutputFormat } from "./commands/status-render.ts";
import { version } from "./commands/version.ts";
import { vet } from "./commands/vet.ts";
import { parseSyncArgs, SyncArgsError } from "./sync-args.ts";
import { SyncAction } from "./sync-actions.ts";
import { negatedBooleanFlags, nomosFlagForms, shorthandValueForms } from "./nomos-flags.ts";
import { printable } from "./terminal-text.ts";

const usage = `usage:
  driftless vet DIR [--source-format unstructured|hierarchy] [--namespace NS] [--clusters A,B] [--threshold[=N]] [--keep-output [--output DIR] [--format yaml|json]]
                                            every check the reconciler runs that needs no cluster, for each
                                            cluster the source names and one without a name, or for the
                                            --clusters given; --namespace NS: as NS's RepoSync (or --sync-kind
                                            RepoSync --sync-namespace NS); errors on stderr (exit 1 on errors);
                                            --keep-output writes what hydrate writes to --output (compiled);
                                            --threshold=N: more than N objects for a cluster is KNV1070 (bare: 1000)
  driftless hydrate DIR [--source-format unstructured|hierarchy] [--output DIR | --flat [--output] FILE] [--format yaml|json] [--clusters A,B]
                                            the objects a RootSync would apply, as YAML or JSON (stdout by
                                            default), for each cluster the source names and defaultcluster (a
                                            folder each with --output), or for the --clusters given ("" for none)
  driftless diff DIR [--source-format unstructured|hierarchy] [--kubeconfig PATH] [--sync-kind RootSync|RepoSync] [--sync-namespace NS] [--sync-name NAME]
                                            what a reconciler would change (exit 1 if anything)
                                            and what it would prune (inventory objects no longer declared)
  driftless status [--kubeconfig PATH] [--namespace NS] [--name NAME] [--resources] [--watch] [-o text|json|yaml] [--timeout D]
                                            every RootSync and RepoSync: source, commits, errors, stall,
                                            and with --resources the managed objects and their kstatus;
                                            --watch redraws on every change until Ctrl-C (exit 1 if any is not synced);
                                            a kind you may not read (or not installed) is reported on stderr
                                            and left out (exit 1 if you may read none); Ctrl-C before a
                                            view: exit 130;
                                            --timeout: each request's deadline (default 30s), as nomos's
  driftless console [--kubeconfig PATH] [--namespace NS] [--port N] [--no-open]
                                            a web console on loopback, as you (your kubeconfig, your RBAC): every
                                            sync, its objects, errors and events, live; sync now, suspend, resume
  driftless sync rootsync|reposync NAME [-n NS] [--wait] [--timeout 5m]
                                            asks for a pass now (driftless.dev/sync-requested-at); with --wait
                                            returns when a newer pass has finished (exit 1 if it failed, if the
                                            manager stalled the sync, if it does not within --timeout, or if you
                                            may not watch the sync; Ctrl-C: exit 130, the request stands)
  driftless suspend|resume rootsync|reposync NAME [-n NS]
                                            sets / removes driftless.dev/suspend: "true"
                                            (TYPE/NAME works too; -n defaults to config-management-system for a
                                            RootSync, and for a RepoSync to the kubeconfig context's namespace,
                                            else default)
  driftless version [--kubeconfig PATH]     the CLI's version and the manager's (its reconciler-manager image tag)
--source-format defaults to unstructured; a RootSync that sets none is read as hierarchy, as in Config Sync.
vet and hydrate take nomos's --path DIR too (DIR defaults to the current directory); they never ask an API
server, so --no-api-server-check and --api-server-timeout are accepted and change nothing. As with nomos,
--clusters may be repeated and boolean flags take =true or =false.
vet, hydrate and diff render a DIR holding a kustomization with kustomize (and helm) first, as a reconciler
does; remote bases and exec plugins only with --enable-shell-in-rendering (override.enableShellInRendering).`;

const options = {
  kubeconfig: { type: "string" },
  "sync-kind": { type: "string", default: "RootSync" },
  "sync-namespace": { type: "string", default: "config-management-system" },
  "sync-name": { type: "string", default: "root-sync" },
  "source-format": { type: "string" },
  output: { type: "string", short: "o" },
  namespace: { type: "string", short: "n" },
  name: { type: "string" },
  resources: { type: "boolean", default: false },
  watch: { type: "boolean", short: "w", default: false },
  // nomos's flags for vet and hydrate, so its scripts run: --path for DIR, --flat with --output FILE,
  // --format; vet and hydrate never ask an API server, so its check and timeout flags change nothing.
  path: { type: "string" },
  flat: { type: "boolean", default: false },
  format: { type: "string", default: HydrateFormat.Yaml },
  "keep-output": { type: "boolean", default: false },
  "no-api-server-check": { type: "boolean", default: false },
  "api-server-timeout": { type: "string" },
  wait: { type: "boolean", default: false },
  // sync --wait's limit (default 5m), status's request deadline (default the client's).
  timeout: { type: "string" },
  port: { type: "string", default: "0" },
  "no-open": { type: "boolean", default: false },
  // Repeatable, each a comma-separated list, as nomos's string-slice flag.
  clusters: { type: "string", multiple: true },
  // nomos: bare `--threshold` is 1000 objects, `--threshold=N` N; absent or 0, no limit.
  threshold: { type: "string" },
  "enable-shell-in-rendering": { type: "boolean", default: false },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsOptionsConfig;
const booleanFlags: ReadonlySet<string> = new Set(
  Object.entries(options).flatMap(([name, option]) => (option.type === "boolean" ? [name] : [])),
);
/** The one-letter forms that take a value (`-n`, `-o`): kubectl's `-n=team-a` is read as `-n team-a`. */
const valueShorthands: ReadonlySet<string> = new Set(
  Object.values(options as ParseArgsOptionsConfig).flatMap((option) =>
    option.type === "string" && option.short !== undefined ? [option.short] : [],
  ),
);

type Flag = keyof typeof options;
/** Every verb takes these, as nomos's global flags (`--kubeconfig` changes nothing for vet and hydrate). */
const everyVerbFlags: readonly Flag[] = ["help", "kubeconfig"];
const renderFlags: readonly Flag[] = ["source-format", "enable-shell-in-rendering"];
const nomosSourceFlags: readonly Flag[] = [
  ...renderFlags,
  "path",
  "clusters",
  "output",
  "format",
  "no-api-server-check",
  "api-server-timeout",
];
/**
 * The flags each verb reads. Any other is refused as cobra refuses a flag its command does not define
 * (`status --flat`, `vet --watch`), so a flag meant for another verb is not silently ignored.
 */
const verbFlags: Readonly<Record<string, readonly Flag[]>> = {
  vet: [...nomosSourceFlags, "namespace", "sync-kind", "sync-namespace", "threshold", "keep-output"],
  hydrate: [...nomosSourceFlags, "flat"],
  diff: [...renderFlags, "sync-kind", "sync-namespace", "sync-name"],
  // --timeout: each request's deadline, as nomos status's (its connection timeout).
  status: ["namespace", "name", "resources", "watch", "output", "timeout"],
  console: ["namespace", "port", "no-open"],
  [SyncAction.Sync]: ["namespace", "wait", "timeout"],
  [SyncAction.Suspend]: ["namespace"],
  [SyncAction.Resume]: ["namespace"],
  version: [],
};

/** The one-letter forms each verb documents (`-h` everywhere); nomos's vet and hydrate have none but `-h`. */
const verbShorthands: Readonly<Record<string, readonly string[]>> = {
  status: ["-n", "-o", "-w"],
  console: ["-n"],
  [SyncAction.Sync]: ["-n"],
  [SyncAction.Suspend]: ["-n"],
  [SyncAction.Resume]: ["-n"],
};

/** A flag given to a verb that does not take it; `flag` as written (`--watch`, `-w`). */
class ForeignFlagError extends Error {
  readonly flag: string;
  constructor(flag: string) {
    super(unknownFlagText(flag));
    this.flag = flag;
  }
}

/** Refuses the first flag in `tokens` that `command` does not take (nothing for a command driftless lacks). */
function refuseForeignFlags(command: string, tokens: readonly { kind: string; name?: string; rawName?: string }[]) {
  const own = verbFlags[command];
  if (own === undefined) return;
  const allowed = new Set<string>([...everyVerbFlags, ...own]);
  const shorthands = new Set<string>(["-h", ...(verbShorthands[command] ?? [])]);
  const taken = (t: { name?: string; rawName?: string }): boolean =>
    t.name !== undefined && allowed.has(t.name) && (!/^-[^-]/.test(t.rawName ?? "") || shorthands.has(t.rawName ?? ""));
  const foreign = tokens.find((t) => t.kind === "option" && !taken(t));
  if (foreign !== undefined) throw new ForeignFlagError(foreign.rawName ?? `--${foreign.name ?? ""}`);
}

async function main(argv: readonly string[]): Promise<number> {
  const { values, positionals, tokens } = parseArgs({
    args: nomosFlagForms(shorthandValueForms(argv, valueShorthands), booleanFlags),
    allowPositionals: true,
    options,
    tokens: true,
  });
  if (positionals[0] !== undefined) {
    const negated = negatedBooleanFlags(argv, booleanFlags).map((name) => ({
      kind: "option",
      name,
      rawName: `--${name}`,
    }));
    refuseForeignFlags(positionals[0], [...tokens, ...negated]);
  }
  // File names, object names and messages come from repositories and clusters: no terminal controls.
  const out = (line: string): void => void process.stdout.write(`${printable(line)}\n`);
  const err = (line: string): void => void process.stderr.write(`${printable(line)}\n`);
  const [command, ...operands] = positionals;
  if (values.help === true || command === undefined) {
    out(command === undefined ? usage : usageOf(command));
    return command === undefined && values.help !== true ? 2 : 0;
  }
  const kubeconfig = values.kubeconfig ?? kubeconfigFromEnv(process.env["KUBECONFIG"]);
  const format = values["source-format"] ?? SourceFormat.Unstructured;
  const enableShell = values["enable-shell-in-rendering"];
  if (format !== SourceFormat.Unstructured && format !== SourceFormat.Hierarchy)
    throw new UsageError("--source-format must be unstructured or hierarchy");
  const outputFormat = values.format;
  if (outputFormat !== HydrateFormat.Yaml && outputFormat !== HydrateFormat.Json)
    throw new UsageError('format argument must be "yaml" or "json"');
  if (values["api-server-timeout"] !== undefined && parseDuration(values["api-server-timeout"]) === undefined)
    throw new UsageError("--api-server-timeout must be a duration such as 15s");
  // DIR, or nomos's --path; neither: the current directory, as nomos.
  const dirOf = (): string => {
    if (values.path !== undefined && operands[0] !== undefined && !(command === "hydrate" && values.flat))
      throw new UsageError(`give DIR or --path, not both (${operands[0]} and ${values.path})`);
    return values.path ?? operands.shift() ?? ".";
  };
  switch (command) {
    case "vet": {
      const dir = dirOf();
      if (operands.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(operands[0])}`);
      const kind = values.namespace === undefined ? values["sync-kind"] : "RepoSync";
      if (!isSyncKind(kind)) throw new UsageError("--sync-kind must be RootSync or RepoSync");
      // nomos vet --namespace NS: the source of a RepoSync in NS, which is always unstructured.
      if (values.namespace !== undefined && format !== SourceFormat.Unstructured)
        throw new UsageError("if --namespace is provided, --source-format must be omitted or set to unstructured");
      const scope =
        kind === "RootSync"
          ? ({ kind } as const)
          : ({ kind, namespace: values.namespace ?? values["sync-namespace"] } as const);
      const clusters = values.clusters === undefined ? undefined : clusterList(values.clusters);
      const cluster = clusters === undefined ? {} : { clusters };
      const maxObjects = values.threshold === undefined ? undefined : objectThreshold(values.threshold);
      const threshold = maxObjects === undefined ? {} : { maxObjects };
      const hierarchy = sourceFormatFor(scope, format) === SourceFormat.Hierarchy;
      return onRendered(dir, { enableShell, failureCode: 1, hierarchy }, err, async (read) => {
        const code = await vet(read, { format, scope, ...cluster, ...threshold }, out, err);
        // --keep-output: what was checked, written as hydrate writes it (nomos's default folder: compiled),
        // the clusters that passed even when others failed, as nomos.
        if (!values["keep-output"]) return code;
        const output = values.output ?? "compiled";
        const errorsReported = code !== 0;
        const options = { dir: read, format, scope, output, outputFormat, errorsReported, ...cluster };
        const kept = await hydrate(options, () => undefined, err);
        return code !== 0 ? code : kept;
      });
    }
    case "hydrate": {
      const dir = dirOf();
      // --flat FILE, or nomos's --flat --output FILE; without a file, stdout.
      const flat = values.flat ? (values.output ?? operands.shift()) : undefined;
      if (operands.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(operands[0])}`);
      const output = values.flat ? undefined : values.output;
      const hierarchy = format === SourceFormat.Hierarchy;
      return onRendered(dir, { enableShell, failureCode: 1, hierarchy }, err, (read) =>
        hydrate(
          {
            dir: read,
            format,
            outputFormat,
            ...(output === undefined ? {} : { output }),
            ...(flat === undefined ? {} : { flat }),
            ...(values.clusters === undefined ? {} : { clusters: clusterList(values.clusters) }),
          },
          out,
          err,
        ),
      );
    }
    case "diff": {
      const dir = operands[0];
      if (dir === undefined) throw new UsageError("diff needs a directory");
      const kind = values["sync-kind"];
      if (!isSyncKind(kind)) throw new UsageError("--sync-kind must be RootSync or RepoSync");
      return onRendered(dir, { enableShell, failureCode: 2, refuseKustomizationBelow: true }, out, (read) =>
        diff(
          {
            dir: read,
            format,
            kubeconfig,
            sync: { kind, namespace: values["sync-namespace"], name: values["sync-name"] },
          },
          out,
        ),
      );
    }
    case "status": {
      const output = values.output ?? OutputFormat.Text;
      if (output !== OutputFormat.Text && output !== OutputFormat.Json && output !== OutputFormat.Yaml)
        throw new UsageError("status -o must be text, json or yaml");
      const timeoutMs = values.timeout === undefined ? undefined : parseDuration(values.timeout);
      if (timeoutMs === 0 || (values.timeout !== undefined && timeoutMs === undefined))
        throw new UsageError("--timeout must be a duration such as 15s");
      // Ctrl-C aborts whatever status waits for (a list, a first sync) and it exits 130 at once; a second
      // Ctrl-C finds no listener and ends the process as Node does by default.
      const interrupted = new AbortController();
      process.once("SIGINT", () => interrupted.abort());
      return status(
        {
          kubeconfig,
          ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
          ...(values.name === undefined ? {} : { name: values.name }),
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          resources: values.resources,
          watch: values.watch,
          format: output,
          signal: interrupted.signal,
          tty: process.stdout.isTTY,
        },
        (text) => void process.stdout.write(text),
      );
    }
    case "console": {
      const port = Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port must be a port number");
      const interrupted = new AbortController();
      process.once("SIGINT", () => interrupted.abort());
      process.once("SIGTERM", () => interrupted.abort());
      return consoleCommand(
        {
          kubeconfig,
          ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
          port,
          open: !values["no-open"],
          signal: interrupted.signal,
        },
        out,
      );
    }
    case SyncAction.Sync:
    case SyncAction.Suspend:
    case SyncAction.Resume: {
      const timeoutMs = parseDuration(values.timeout ?? "5m");
      if (timeoutMs === undefined) throw new UsageError("--timeout must be a duration such as 30s or 5m");
      let ref;
      try {
        ref = parseSyncArgs(positionals.slice(1), values.namespace, kubeconfigNamespace(kubeconfig));
      } catch (error) {
        if (error instanceof SyncArgsError) throw new UsageError(error.message);
        throw error;
      }
      const interrupted = new AbortController();
      process.once("SIGINT", () => interrupted.abort());
      return lever(command, ref, { kubeconfig, wait: values.wait, timeoutMs, signal: interrupted.signal }, out);
    }
    case "version":
      return version(kubeconfig, out);
    default:
      throw new UnknownCommandError(`unknown command ${JSON.stringify(command)} for "driftless"`);
  }
}

/** A verb used wrongly: a flag's value, an operand. */
class UsageError extends Error {}
/** No such verb: exit 1, as nomos (cobra) exits for one. */
class UnknownCommandError extends Error {}

/** nomos's verbs: they fail as nomos does, so its scripts and Config Sync's e2e checks read them alike. */
const nomosVerbs: ReadonlySet<string> = new Set(["vet", "hydrate"]);

/** The verb of `argv` as parseArgs reads it (an option's value is not taken for it), without refusing anything. */
function verbOf(argv: readonly string[]): string | undefined {
  try {
    return parseArgs({ args: nomosFlagForms(argv, booleanFlags), options, strict: false, allowPositionals: true })
      .positionals[0];
  } catch {
    return undefined;
  }
}

/** node:util's parseArgs refusing an option it does not know, or one without its value. */
function isParseArgsError(error: unknown): error is Error & { code: string } {
  return error instanceof Error && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS_");
}

/**
 * Prints why `verb` failed and returns the exit code. vet and hydrate as cobra prints for nomos:
 * `Error: <why>` on stderr, exit 1, the usage only after a flag it does not know. driftless's own
 * verbs: `driftless: <why>`, and a verb used wrongly exits 2 with its usage.
 */
function reportFailure(verb: string | undefined, error: unknown): number {
  const message = printable(error instanceof Error ? error.message : String(error));
  const flagError = isParseArgsError(error) || error instanceof ForeignFlagError;
  if (verb !== undefined && nomosVerbs.has(verb)) {
    const unknownFlag = unknownFlagOf(error);
    process.stderr.write(`Error: ${unknownFlag === undefined ? message : unknownFlagText(unknownFlag)}\n`);
    if (flagError) process.stderr.write(`${usageOf(verb)}\n`);
    return 1;
  }
  // A flag the verb does not know, or one without its value, is the verb used wrongly too: exit 2, its usage.
  // An unknown command with a flag is still an unknown command (exit 1), as cobra answers it.
  const misused = error instanceof UsageError || (verb !== undefined && usageBlocksOf(verb).length > 0 && flagError);
  process.stderr.write(`driftless: ${isParseArgsError(error) ? flagProblem(error) : message}\n`);
  if (misused || error instanceof UnknownCommandError) process.stderr.write(`${usageOf(verb ?? "")}\n`);
  return misused ? 2 : 1;
}

/** cobra's words for a flag it does not know: `unknown flag: --x`, `unknown shorthand flag: 'x' in -x`. */
function unknownFlagText(flag: string): string {
  const shorthand = /^-([^-])/.exec(flag)?.[1];
  return printable(
    shorthand === undefined ? `unknown flag: ${flag}` : `unknown shorthand flag: '${shorthand}' in ${flag}`,
  );
}

/** The flag a verb does not know, as written: parseArgs's unknown option, or one of another verb's. */
function unknownFlagOf(error: unknown): string | undefined {
  if (error instanceof ForeignFlagError) return error.flag;
  return isParseArgsError(error) ? /^Unknown option '(--?[^']+)'/.exec(error.message)?.[1] : undefined;
}

/** parseArgs's refusal in cobra's words (kubectl's, nomos's), without its advice about `--`. */
function flagProblem(error: Error & { code: string }): string {
  const unknown = /^Unknown option '(--?[^']+)'/.exec(error.message)?.[1];
  if (unknown !== undefined) return unknownFlagText(unknown);
  const missing = /^Option '(-[^,\s']+)(?:, (--[^\s']+))?[^']*' argument missing/.exec(error.message);
  if (missing !== null) return `flag needs an argument: ${printable(missing[2] ?? missing[1] ?? "")}`;
  return printable(error.message);
}

/** The part of the usage about `command` (`driftless sync --help`), or all of it for an unknown one. */
function usageOf(command: string): string {
  const own = usageBlocksOf(command);
  return own.length === 0 ? usage : `usage:\n${own.map((b) => b.split(/\n(?=\S)/)[0]).join("\n")}`;
}

/** The usage's blocks of `command`: none for a command driftless does not have. */
function usageBlocksOf(command: string): string[] {
  const blocks = usage.split(/\n(?= {2}driftless )/);
  return blocks.filter((b) => /^ {2}driftless (\S+)/.exec(b)?.[1]?.split("|").includes(command) === true);
}

/**
 * `$KUBECONFIG` as kubectl reads it: a list of files (the first that exists is used; they are not merged);
 * empty or unset means the default (~/.kube/config, or in-cluster).
 */
function kubeconfigFromEnv(value: string | undefined): string | undefined {
  const files = (value ?? "").split(delimiter).filter((f) => f !== "");
  return files.find((f) => existsSync(f)) ?? files[0];
}

/** `--clusters A,B --clusters C` (as nomos); "" for a cluster without a name. */
function clusterList(values: readonly string[]): string[] {
  return values.flatMap((value) => value.split(",").map((c) => c.trim()));
}

/** `--threshold`'s value: the most objects a cluster may get; undefined (no limit) for 0, as nomos. */
function objectThreshold(value: string): number | undefined {
  if (!/^\d+$/.test(value)) throw new UsageError("--threshold must be a whole number of objects");
  const limit = Number(value);
  return limit === 0 ? undefined : limit;
}

const argv = process.argv.slice(2);
main(argv).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportFailure(verbOf(argv), error)),
);
