/**
 * The image `npm run image:build` makes from the Dockerfile (scripts/image/build.sh: local bases from
 * Debian packages, nothing pulled), run as Kubernetes runs it from manifests/: read-only root
 * filesystem, no capabilities, no network, only /tmp (or Redis's /data) writable. Builds the image, or
 * reuses it when nothing changed (a warm run costs seconds), and runs it with podman.
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmod, chown, copyFile, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseAllDocuments } from "yaml";
import { reconcilerEnvironment, reconcilerNodeFlags } from "@driftless/controller";
import { findRepoRoot, freeLoopbackPort } from "@driftless/local-cluster";
import {
  coreApi,
  createRepoSync,
  repoSyncSyncedTo,
  suffix,
  testEnv,
  testNamespace,
  TestRepo,
  removeAfter,
} from "../support/index.ts";

const root = findRepoRoot();
const version = (JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string }).version;
const image = `driftless:${version}`;
const redisImage = "redis:7.0-bookworm";
// Building images and running containers needs root here (no subordinate IDs are set up for rootless use).
const skip = process.getuid?.() !== 0 ? "needs root (buildah and podman run rootful)" : false;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly all: string;
}

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let all = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      all += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => (all += c.toString()));
    child.once("error", reject);
    // On 'close', not 'exit': 'exit' may come before the pipes are drained.
    child.once("close", (code) => resolve({ code, stdout, all }));
  });
}

/**
 * Runs IMAGE's COMMAND as a pod of manifests/ runs: read-only root, every capability dropped, no privilege
 * escalation, no network, a tmpfs where the pod has an emptyDir. The user is the image's own unless given.
 * The limits are set below this machine's because its root lacks CAP_SYS_RESOURCE (podman's defaults
 * would raise them, which runc is refused).
 */
function runContainer(
  ref: string,
  command: readonly string[],
  options: { user?: string; writable?: string; env?: Record<string, string> } = {},
): Promise<Run> {
  const args = ["run", "--rm", "--pull=never", "--network=none", "--read-only", "--read-only-tmpfs=false"];
  args.push("--cap-drop=ALL", "--security-opt=no-new-privileges", "--ulimit=nofile=1024:1024");
  args.push("--ulimit=nproc=1024:1024", `--tmpfs=${options.writable ?? "/tmp"}:rw,size=64m,mode=1777`);
  if (options.user !== undefined) args.push(`--user=${options.user}`);
  for (const [name, value] of Object.entries(options.env ?? {})) args.push(`--env=${name}=${value}`);
  return run("podman", [...args, `docker.io/library/${ref}`, ...command]);
}

// A cold build (bases made from Debian packages, npm ci without a cache) takes minutes; a warm one seconds.
before(
  async () => {
    if (skip !== false) return;
    // Not into a node: a cluster suite running beside this one imports the image into its own node itself.
    const build = await run("bash", ["scripts/image/build.sh", "--no-import"]);
    assert.equal(build.code, 0, build.all);
    assert.match(build.stdout.trim(), new RegExp(`\\.local/image/driftless-${version.replaceAll(".", "\\.")}\\.tar$`));
  },
  { timeout: 900_000 },
);

test("the image runs its bundles on a read-only root filesystem as the non-root user 65532", { skip }, async () => {
  const id = await runContainer(image, ["id", "-u"]);
  assert.equal(id.stdout.trim(), "65532", id.all);
  // No --help flag: each prints its usage for an unknown option, which needs the whole bundle loaded.
  const manager = await runContainer(image, ["node", "dist/driftless-manager.mjs", "--help"]);
  assert.match(manager.all, /usage: driftless-manager/);
  assert.doesNotMatch(manager.all, /Cannot find|ERR_MODULE_NOT_FOUND|EROFS/);
  const reconciler = await runContainer(image, ["node", "dist/driftless-reconciler.mjs", "--help"]);
  assert.match(reconciler.all, /usage: driftless-reconciler/);
  assert.doesNotMatch(reconciler.all, /Cannot find|ERR_MODULE_NOT_FOUND|EROFS/);
  const groups = await runContainer(image, ["node", "dist/driftless-resource-group-controller.mjs", "--help"]);
  assert.match(groups.all, /usage: driftless-resource-group-controller/);
  assert.doesNotMatch(groups.all, /Cannot find|ERR_MODULE_NOT_FOUND|EROFS/);
  const writeRoot = await runContainer(image, ["sh", "-c", "touch /app/probe"]);
  assert.notEqual(writeRoot.code, 0);
  assert.match(writeRoot.all, /Read-only file system/);
});

test(
  "the image holds only what runs: the bundles and their external packages, no sources, tests, build context or secrets",
  { skip },
  async () => {
    const listing = await runContainer(image, ["sh", "-c", "find /app -not -path '/app/node_modules/*' | sort"]);
    assert.equal(listing.code, 0, listing.all);
    const outside = listing.stdout
      .trim()
      .split("\n")
      .filter((path) => !/^\/app(\/package\.json|\/node_modules|\/dist|\/dist\/[^/]+\.(mjs|txt))?$/.test(path));
    assert.deepEqual(outside, [], "files beside the bundles in /app");
    const stray = await runContainer(
      image,
      [
        "sh",
        "-c",
        // Folders even root cannot read without capabilities (apt's partial/) are passed over.
        "find / -xdev \\( -name redis-password.env -o -name .git -o -path /app/node_modules/@driftless \\) -print 2>/dev/null; true",
      ],
      { user: "0" },
    );
    assert.equal(stray.code, 0, stray.all);
    assert.equal(stray.stdout.trim(), "", "a secret, a repository or a link to our sources in the image");
  },
);

test("the image's kustomize and helm are the pinned versions the tests use", { skip }, async () => {
  const pinned = async (tool: string) =>
    (await readFile(join(root, "packages", "sync", "versions", tool), "utf8")).trim();
  const kustomize = await runContainer(image, ["kustomize", "version"]);
  assert.equal(kustomize.code, 0, kustomize.all);
  assert.equal(kustomize.stdout.trim(), await pinned("kustomize"));
  const helm = await runContainer(image, ["helm", "version", "--template={{.Version}}"]);
  assert.equal(helm.code, 0, helm.all);
  assert.equal(helm.stdout.trim(), await pinned("helm"));
});

test(
  "git works with HOME on the /tmp tmpfs: init, commit, clone, and ssh is there for ssh remotes",
  { skip },
  async () => {
    const script = [
      "set -e",
      'test "$HOME" = /tmp',
      "git config --global user.email image@driftless.invalid && git config --global user.name image",
      "git init -q /tmp/origin && cd /tmp/origin && echo data > f && git add f && git commit -qm first",
      "git clone -q /tmp/origin /tmp/clone && git -C /tmp/clone log --format=%s",
      "ssh -V 2>&1",
    ].join("\n");
    const git = await runContainer(image, ["sh", "-c", script]);
    assert.equal(git.code, 0, git.all);
    assert.match(git.stdout, /^first$/m);
    assert.match(git.all, /OpenSSH/);
  },
);

test("manifests/ and the manager's default reconciler image name the images image:build makes", { skip }, async () => {
  const images = async (file: string) =>
    parseAllDocuments(await readFile(join(root, "manifests", file), "utf8"))
      .map((doc) => doc.toJS() as { spec?: { template?: { spec?: { containers?: Container[] } } } })
      .flatMap((object) => object.spec?.template?.spec?.containers ?? []);
  interface Container {
    image: string;
    env?: { name: string; value?: string }[];
  }
  const [manager] = await images("manager.yaml");
  assert.equal(manager?.image, image);
  assert.equal(manager?.env?.find((e) => e.name === "RECONCILER_IMAGE")?.value, image);
  const [redis] = await images("redis.yaml");
  assert.equal(redis?.image, redisImage);
  // The manager's own default (deployment mode without RECONCILER_IMAGE), from its config module.
  const config = pathToFileURL(join(root, "apps", "manager", "src", "config.ts")).href;
  const defaultImage = await run(process.execPath, [
    "--input-type=module",
    "-e",
    `const { parseConfig } = await import(${JSON.stringify(config)});
     console.log(parseConfig([], { REDIS_URL: "redis://127.0.0.1:1", REDIS_PASSWORD: "unused" }).reconcilerImage);`,
  ]);
  assert.equal(defaultImage.stdout.trim(), image, defaultImage.all);
  // What the build made is there under those names.
  for (const ref of [image, redisImage]) {
    const exists = await run("podman", ["image", "exists", `docker.io/library/${ref}`]);
    assert.equal(exists.code, 0, `${ref} was not built`);
  }
});

test(
  "the Redis image runs manifests/redis.yaml's own command read-only as 999 and requires the password",
  { skip },
  async () => {
    const docs = parseAllDocuments(await readFile(join(root, "manifests", "redis.yaml"), "utf8"));
    const deployment = docs[0]?.toJS() as {
      spec: { template: { spec: { containers: { command: string[]; args: string[] }[] } } };
    };
    const container = deployment.spec.template.spec.containers[0]!;
    // The manifest's script ends in `exec redis-server ...`: run it in the background, then ask Redis.
    const script = `${container.args[0]!.trim()} --daemonize yes --logfile /data/redis.log`;
    const check = [
      script.replace(/^exec /m, ""),
      "for i in $(seq 1 50); do redis-cli ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done",
      "redis-cli ping",
      "REDISCLI_AUTH=wrong redis-cli ping 2>&1 || true",
    ].join("\n");
    const redis = await runContainer(redisImage, [...container.command, check], {
      user: "999:999",
      writable: "/data",
      env: { REDISCLI_AUTH: 'p"a\\ss' },
    });
    assert.equal(redis.code, 0, redis.all);
    assert.match(redis.stdout, /^PONG$/m);
    assert.match(redis.stdout, /WRONGPASS/);
  },
);

test(
  "the image's reconciler syncs a RepoSync from inside the container and stops cleanly on SIGTERM",
  { skip },
  async (t) => {
    const namespace = await testNamespace(t);
    const repo = await TestRepo.create(t);
    await repo.write(
      "config/a.yaml",
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } }),
    );
    const commit = await repo.commit("one config map");
    // The container's user reads the repository (git refuses one owned by another user) and the kubeconfig.
    const own = await run("chown", ["-R", "65532:65532", repo.remote]);
    assert.equal(own.code, 0, own.all);
    const dir = await mkdtemp(join(tmpdir(), "driftless-image-"));
    removeAfter(t, dir);
    const kubeconfig = join(dir, "kubeconfig");
    await copyFile(testEnv().kubeconfig, kubeconfig);
    await chown(kubeconfig, 65532, 65532);
    await chmod(kubeconfig, 0o400);
    await createRepoSync(namespace, repo, { git: { period: "2s" } });

    // Host network for the loopback control plane and Redis; otherwise as the manager's Deployment runs it:
    // its flags and environment, /tmp and /cache the only writable places.
    const name = `driftless-image-${suffix()}`;
    const metricsPort = await freeLoopbackPort();
    const args = ["run", "--rm", `--name=${name}`, "--pull=never", "--network=host", "--read-only"];
    args.push("--read-only-tmpfs=false", "--cap-drop=ALL", "--security-opt=no-new-privileges");
    args.push("--ulimit=nofile=1024:1024", "--ulimit=nproc=1024:1024", "--tmpfs=/tmp:rw,mode=1777");
    args.push("--tmpfs=/cache:rw,mode=1777", `--volume=${kubeconfig}:/kube/config:ro`);
    args.push(`--volume=${repo.remote}:${repo.remote}:ro`);
    for (const [key, value] of Object.entries(reconcilerEnvironment)) args.push(`--env=${key}=${value}`);
    args.push(`docker.io/library/${image}`, "node", ...reconcilerNodeFlags(), "dist/driftless-reconciler.mjs");
    args.push("--sync-kind=RepoSync", "--sync-name=repo-sync", `--sync-namespace=${namespace}`);
    // Redis with its password in the environment, as a pod gets it (a flag would show in `ps`).
    args.splice(args.indexOf(`docker.io/library/${image}`), 0, `--env=REDIS_URL=${testEnv().redisUrl}`);
    args.push("--kubeconfig=/kube/config", `--queue-prefix=img${suffix()}`);
    args.push(`--metrics-port=${metricsPort}`, "--cache-dir=/cache", "--allow-file-repos");
    const child = spawn("podman", args, { stdio: ["ignore", "pipe", "pipe"] });
    const output: string[] = [];
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    // On 'close', not 'exit': the output is checked once it has exited, and 'exit' may come before it is all read.
    const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
    t.after(() => run("podman", ["rm", "--force", "--time=0", name]));

    await repoSyncSyncedTo(namespace, commit, { timeoutMs: 60_000, output: () => output.join("") });
    assert.deepEqual((await coreApi().readNamespacedConfigMap({ namespace, name: "a" })).data, { k: "v" });
    const health = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
    assert.equal(health.status, 200);

    const stop = await run("podman", ["stop", "--time=30", name]);
    assert.equal(stop.code, 0, stop.all);
    assert.equal(await exited, 0, `the reconciler did not exit cleanly on SIGTERM: ${output.join("").slice(-2000)}`);
    assert.doesNotMatch(output.join(""), /EROFS|EACCES|read-only file system/i);
  },
);

test(
  "a second image:build reuses the bases (cached by a hash of their inputs) and the render tools",
  { skip },
  async () => {
    const again = await run("bash", ["scripts/image/build.sh", "--no-import"]);
    assert.equal(again.code, 0, again.all);
    assert.doesNotMatch(again.all, /image base: making|image redis: making|render tools: building/);
    const base = await run("buildah", [
      "images",
      "--format={{.Name}}:{{.Tag}}",
      "--filter=reference=localhost/driftless-node-base",
    ]);
    assert.equal(base.stdout.trim().split("\n").length, 1, `one node base, not ${base.stdout}`);
  },
);
