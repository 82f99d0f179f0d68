import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "yaml";
import {
  chartReference,
  pullArgs,
  registryLoginArgs,
  repositoriesYaml,
  repoUpdateArgs,
  showChartArgs,
  templateArgs,
} from "./helm-args.ts";

const password = "s3cret-pw";

/** Everything after `--` is positional; nothing before it may come from the spec unless glued to its flag. */
function positionals(args: readonly string[]): string[] {
  const at = args.indexOf("--");
  assert.notEqual(at, -1, `no -- in ${args.join(" ")}`);
  return args.slice(at + 1);
}

test("spec values reach helm after -- or as --flag=value, so a releaseName like --set-file=… stays a name", () => {
  const reference = chartReference({ repo: "https://charts.example", chart: "web" });
  const args = templateArgs({
    reference,
    releaseName: "--set-file=leak=/etc/hostname",
    version: "--post-renderer=/bin/sh",
    namespace: "--kubeconfig=/x",
    includeCRDs: true,
    valuesFiles: ["/cache/v0.yaml"],
    outputDir: "/cache/out",
  });
  assert.deepEqual(positionals(args), ["--set-file=leak=/etc/hostname", "driftless/web"]);
  const flags = args.slice(0, args.indexOf("--"));
  for (const flag of flags.slice(1)) assert.match(flag, /^--[a-z-]+(=.*)?$/, flag);
  assert.ok(flags.includes("--version=--post-renderer=/bin/sh"));
  assert.ok(flags.includes("--namespace=--kubeconfig=/x"));

  assert.deepEqual(positionals(showChartArgs(reference, "^1")), [reference]);
  assert.deepEqual(positionals(repoUpdateArgs()), ["driftless"]);
  assert.deepEqual(positionals(pullArgs(reference, "--untar", "/cache/pull")), [reference]);
  const oci = chartReference({ repo: "oci://registry.example/charts/", chart: "web" });
  assert.equal(oci, "oci://registry.example/charts/web");
  assert.deepEqual(positionals(registryLoginArgs("registry.example", "me")), ["registry.example"]);
});

test("the repository password is never on a command line: it is in repositories.yaml, for that repository only", () => {
  const argv = [
    ...templateArgs({
      reference: "driftless/web",
      releaseName: "web",
      version: "1.0.0",
      namespace: "default",
      includeCRDs: false,
      valuesFiles: [],
      outputDir: "/out",
    }),
    ...showChartArgs("driftless/web", undefined),
    ...repoUpdateArgs(),
    ...registryLoginArgs("registry.example", "me"),
  ];
  assert.ok(!argv.some((arg) => arg.includes(password)), argv.join(" "));
  assert.ok(!argv.some((arg) => arg.startsWith("--password") && arg !== "--password-stdin"), argv.join(" "));

  const config = parse(repositoriesYaml("https://charts.example", { username: "me", password }, "/ca.pem")) as {
    repositories: Record<string, unknown>[];
  };
  assert.deepEqual(config.repositories, [
    {
      name: "driftless",
      url: "https://charts.example",
      username: "me",
      password,
      caFile: "/ca.pem",
      pass_credentials_all: false,
    },
  ]);
});
