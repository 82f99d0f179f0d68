import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { KnvCode } from "@driftless/api";
import { checkKustomizationPaths } from "./kustomization-paths.ts";
import { RenderingError } from "./render-error.ts";
import { defaultRenderToolsDir } from "./render-tools.ts";

/** A scratch folder holding a repository checkout `repo/` and, beside it, a file the tenant must not read. */
let scratch: string;
let outside: string;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), "driftless-kpaths-"));
  outside = join(scratch, "secret-token");
  await writeFile(outside, "reconciler-token");
});
after(() => rm(scratch, { recursive: true, force: true }));

let count = 0;
/** A new checkout with `files` (path → content, or {link} for a symlink); returns its root. */
async function repo(files: Record<string, string | { link: string }>): Promise<string> {
  const root = join(scratch, `repo-${count++}`);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    if (typeof content === "string") await writeFile(join(root, path), content);
    else await symlink(content.link, join(root, path));
  }
  await mkdir(join(root, "config"), { recursive: true });
  return root;
}

const y = (obj: unknown): string => JSON.stringify(obj);
/** A character as a JSON (and YAML double-quoted) escape. */
const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

async function check(root: string, allowRemote = false): Promise<void> {
  await checkKustomizationPaths(join(root, "config"), { repositoryRoot: root, allowRemote });
}

async function refused(root: string, why: RegExp, allowRemote = false): Promise<void> {
  await assert.rejects(check(root, allowRemote), (error: unknown) => {
    assert.ok(error instanceof RenderingError, String(error));
    assert.equal(error.code, KnvCode.Rendering);
    assert.match(error.message, why);
    return true;
  });
}

void describe("checkKustomizationPaths", () => {
  void it("refuses a configMapGenerator file given as an absolute path, in both of kustomize's forms", async () => {
    for (const files of [[outside], [`leak=${outside}`]]) {
      const root = await repo({ "config/kustomization.yaml": y({ configMapGenerator: [{ name: "x", files }] }) });
      await refused(root, /configMapGenerator\[\]\.files entry ".*secret-token" is an absolute path/);
    }
  });

  void it("refuses a ../ path out of the checkout in generators' files and envs, patches, crds and the rest", async () => {
    const out = "../../secret-token";
    const cases: Record<string, unknown>[] = [
      { secretGenerator: [{ name: "x", envs: [out] }] },
      { configMapGenerator: [{ name: "x", env: out }] },
      { patches: [{ path: out }] },
      { patchesJson6902: [{ path: out, target: { kind: "X", name: "y" } }] },
      { patchesStrategicMerge: [out] },
      { replacements: [{ path: out }] },
      { crds: [out] },
      { configurations: [out] },
      { openapi: { path: out } },
      { resources: [out] },
      { components: ["../../"] },
      { helmCharts: [{ name: "c", valuesFile: out }] },
      { helmCharts: [{ name: "c", additionalValuesFiles: [out] }] },
    ];
    for (const k of cases) {
      const root = await repo({ "config/kustomization.yaml": y(k) });
      await refused(root, /leaves the repository/);
    }
  });

  void it("checks openapi.path under every key kustomize folds to it: given twice, kustomize reads the later one", async () => {
    // A path outside whose file is absent: the real kustomize, run as the render runs it, fails opening it,
    // which shows the build reads the later key's path (present, it would read the file's content).
    const absent = join(scratch, "absent-schema.json");
    const kustomization = `OpenAPI: {path: schema.json}\nopenapi: {path: ${JSON.stringify(absent)}}\nresources: [cm.yaml]\n`;
    const kustomize = join(
      defaultRenderToolsDir() ?? assert.fail("no render tools: run npm test's setup"),
      "kustomize",
    );
    const root = await repo({
      "config/kustomization.yaml": kustomization,
      "config/schema.json": "{}",
      "config/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
    });
    const run = spawnSync(kustomize, ["build", "--load-restrictor=LoadRestrictionsNone", join(root, "config")], {
      encoding: "utf8",
      env: { HOME: scratch },
    });
    assert.ok(run.stderr.includes(`open ${absent}`), `kustomize did not open ${absent}: ${run.stderr}`);
    await refused(root, /openapi\.path .*is an absolute path/);
  });

  void it("refuses a symlink that leads out of the checkout, wherever the kustomization names it", async () => {
    const token = { link: outside };
    await refused(
      await repo({
        "config/kustomization.yaml": y({ configMapGenerator: [{ name: "x", files: ["token"] }] }),
        "config/token": token,
      }),
      /"token" is a symlink to .*secret-token, outside the repository/,
    );
    // A symlinked directory on the way, and the kustomization file itself.
    await refused(
      await repo({
        "config/kustomization.yaml": y({ resources: ["up/secret-token"] }),
        "config/up": { link: scratch },
      }),
      /outside the repository/,
    );
    await refused(
      await repo({ "config/kustomization.yaml": { link: outside } }),
      /symlink to .*outside the repository/,
    );
    await refused(
      await repo({ "config/kustomization.yaml": y({ resources: ["gone"] }), "config/gone": { link: "/no/such/file" } }),
      /dangling symlink/,
    );
  });

  void it("refuses helmGlobals.chartHome or configHome outside the checkout, and a chart holding a symlink out", async () => {
    for (const chartHome of ["/tmp", "../../elsewhere"])
      await refused(
        await repo({ "config/kustomization.yaml": y({ helmGlobals: { chartHome }, helmCharts: [{ name: "c" }] }) }),
        /chartHome "[^"]+" (is an absolute path|leaves the repository)/,
      );
    await refused(
      await repo({ "config/kustomization.yaml": y({ helmGlobals: { configHome: "/root/.config/helm" } }) }),
      /configHome "\/root\/\.config\/helm" is an absolute path/,
      true,
    );
    await refused(
      await repo({
        "config/kustomization.yaml": y({ helmCharts: [{ name: "c" }] }),
        "config/charts/c/Chart.yaml": "name: c\n",
        "config/charts/c/files/token": { link: outside },
      }),
      /chart "c": config\/charts\/c\/files\/token is a symlink to .*secret-token/,
    );
    // kustomize pulls a chart with a version into chartHome/name-version: the version is part of a path.
    await refused(
      await repo({
        "config/kustomization.yaml": y({
          helmCharts: [{ name: "c", repo: "https://charts.example", version: "/../../../../../x" }],
        }),
      }),
      /leaves the repository/,
    );
  });

  void it("refuses helmCharts values kustomize would pass to helm as flags", async () => {
    for (const chart of [
      { name: "c", releaseName: "--set-file=leak=/etc/hostname" },
      { name: "--post-renderer=/bin/sh" },
      { name: "c", repo: "file:///etc" },
    ])
      await refused(
        await repo({ "config/kustomization.yaml": y({ helmCharts: [chart] }) }),
        /helmCharts (releaseName|name|repo) .* must be/,
      );
    await refused(
      await repo({
        "config/kustomization.yaml": y({ helmChartInflationGenerator: [{ chartName: "c", releaseName: "--debug" }] }),
      }),
      /helmChartInflationGenerator releaseName "--debug"/,
    );
  });

  void it("refuses URLs without shell access, and leaves them to kustomize with it", async () => {
    const cases: Record<string, unknown>[] = [
      { resources: ["https://127.0.0.1:1/x.yaml"] },
      { resources: ["github.com/example/repo//base?ref=v1"] },
      { resources: ["git::https://example.com/repo.git"] },
      { resources: ["git@example.com:org/repo.git"] },
      { components: ["ssh://example.com/repo"] },
      { helmCharts: [{ name: "c", valuesFile: "http://169.254.169.254/latest/meta-data" }] },
      { configMapGenerator: [{ name: "x", files: ["k=https://127.0.0.1/secret"] }] },
    ];
    for (const k of cases) {
      const root = await repo({ "config/kustomization.yaml": y(k) });
      await refused(root, /is a URL: .*enableShellInRendering/);
      await check(root, true);
    }
  });

  void it("reads keys as kustomize does: case-insensitively, through YAML merge keys, in every kustomization file name", async () => {
    await refused(
      await repo({ "config/Kustomization": y({ ConfigMapGenerator: [{ NAME: "x", FILES: [outside] }] }) }),
      /absolute path/,
    );
    // kustomize's go-yaml merges otherwise than the JS library: a merge key (and the anchor it needs) is refused.
    await refused(
      await repo({
        "config/kustomization.yml": `base: &b\n  name: x\n  files: ["${outside}"]\nconfigMapGenerator:\n  - <<: *b\n`,
      }),
      /config\/kustomization\.yml: line 1 uses the YAML anchor &b/,
    );
    await refused(await repo({ "config/kustomization.yaml": "resources: [a\n" }), /is not valid YAML/);
  });

  void it("checks builtin plugin configurations, inline or in files, and refuses a kustomization building them", async () => {
    const gen = `apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\nfiles:\n  - ${outside}\n`;
    await refused(
      await repo({ "config/kustomization.yaml": y({ generators: [gen] }) }),
      /\(inline\) \(ConfigMapGenerator\)/,
    );
    await refused(
      await repo({ "config/kustomization.yaml": y({ generators: ["gen.yaml"] }), "config/gen.yaml": gen }),
      /generators entry \(ConfigMapGenerator\).*absolute path/,
    );
    const patch = "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: ../../secret-token\n";
    await refused(
      await repo({ "config/kustomization.yaml": y({ transformers: ["p.yaml"] }), "config/p.yaml": patch }),
      /PatchTransformer.*leaves the repository/,
    );
    const dir = await repo({
      "config/kustomization.yaml": y({ generators: ["gens"] }),
      "config/gens/kustomization.yaml": y({ resources: [] }),
    });
    await refused(dir, /is a directory: driftless cannot check/);
    await check(dir, true);
  });

  void it("checks every plugin configuration kustomize takes as builtin (apiVersion builtin or /builtin), inside List and ResourceList items too", async () => {
    const gen = (apiVersion: string): Record<string, unknown> => ({
      apiVersion,
      kind: "ConfigMapGenerator",
      metadata: { name: "x" },
      files: [outside],
    });
    const entries = [
      y(gen("/builtin")),
      y({ apiVersion: "v1", kind: "List", items: [gen("builtin")] }),
      y({ apiVersion: "config.kubernetes.io/v1", kind: "ResourceList", items: [gen("/builtin")] }),
      y({ apiVersion: "x/v1", kind: "FooList", items: [{ apiVersion: "v1", kind: "List", items: [gen("builtin")] }] }),
    ];
    for (const entry of entries) {
      await refused(
        await repo({ "config/kustomization.yaml": y({ generators: [entry] }) }),
        /\(inline\) \(ConfigMapGenerator\)\[\]\.files entry ".*secret-token" is an absolute path/,
      );
      // Shell access allows URLs and other plugins, never a builtin reading outside the checkout.
      await refused(
        await repo({ "config/kustomization.yaml": y({ generators: ["gen.yaml"] }), "config/gen.yaml": entry }),
        /generators entry \(ConfigMapGenerator\)\[\]\.files entry ".*secret-token" is an absolute path/,
        true,
      );
    }
  });

  void it("refuses a plugin configuration that is not a kustomize builtin without shell access, and a generators entry it cannot read", async () => {
    const custom = y({ apiVersion: "example.com/v1", kind: "Leak", metadata: { name: "x" }, files: [outside] });
    const root = await repo({ "config/kustomization.yaml": y({ transformers: [custom] }) });
    await refused(root, /"example\.com\/v1" Leak is not one of kustomize's builtin plugins; .*enableShellInRendering/);
    await check(root, true);
    await refused(
      await repo({ "config/kustomization.yaml": y({ generators: [y({ apiVersion: "builtin", kind: "Nope" })] }) }),
      /"builtin" Nope is not one of kustomize's builtin plugins/,
    );
    // kustomize reads an entry as inline YAML first and as a path only when that fails: neither is skipped.
    for (const [entry, why] of [
      ["apiVersion: builtin\nkind: ConfigMapGenerator\nfiles: [a\n", /is neither a file of the repository nor YAML/],
      [`${"a".repeat(1100)}: 1\nkind: ConfigMapGenerator\n`, /is neither a file of the repository nor YAML/],
      ["- apiVersion: builtin\n- kind: ConfigMapGenerator\n", /is neither a file of the repository nor YAML/],
      ["missing.yaml", /names no file of the repository/],
    ] as const)
      await refused(await repo({ "config/kustomization.yaml": y({ generators: [entry] }) }), why);
  });

  void it("reports a name too long for the file system, or a folder it cannot read, as a rendering error naming the entry", async () => {
    await refused(
      await repo({ "config/kustomization.yaml": y({ resources: ["x".repeat(300)] }) }),
      /resources entry "x{20}.*" cannot be read \(ENAMETOOLONG\)/,
    );
    await refused(
      await repo({ "config/kustomization.yaml": y({ generators: ["y".repeat(300)] }) }),
      /generators entry .* cannot be read \(ENAMETOOLONG\)/,
    );
  });

  void it("follows a chart's symlinked directories as helm's loader does: a symlink out inside one is refused, a loop is not followed twice", async () => {
    await refused(
      await repo({
        "config/kustomization.yaml": y({ helmCharts: [{ name: "c" }] }),
        "config/charts/c/Chart.yaml": "name: c\n",
        "config/charts/c/files": { link: "../../../other" },
        "other/nested/secret": { link: outside },
      }),
      /chart "c": other\/nested\/secret is a symlink to .*secret-token, outside the repository/,
    );
    await refused(
      await repo({
        "config/kustomization.yaml": y({ helmCharts: [{ name: "c" }] }),
        "config/charts/c/Chart.yaml": "name: c\n",
        "config/charts/c/files": { link: "../../../gone" },
      }),
      /chart "c": config\/charts\/c\/files is a dangling symlink/,
    );
    await check(
      await repo({
        "config/kustomization.yaml": y({ helmCharts: [{ name: "c" }] }),
        "config/charts/c/Chart.yaml": "name: c\n",
        "config/charts/c/files": { link: "../../../other" },
        "other/loop": { link: "../config/charts/c" },
        "other/data.txt": "x\n",
      }),
    );
  });

  void it("refuses helmGlobals.configHome (where helm finds plugins, repositories and registry logins) without shell access", async () => {
    for (const k of [
      { helmGlobals: { configHome: "helm" } },
      { helmChartInflationGenerator: [{ chartName: "c", helmHome: "helm" }] },
      {
        generators: [y({ apiVersion: "builtin", kind: "HelmChartInflationGenerator", name: "c", configHome: "helm" })],
      },
    ]) {
      const root = await repo({ "config/kustomization.yaml": y(k), "config/helm/repositories.yaml": "{}\n" });
      await refused(root, /(configHome|helmHome) "helm" .*needs spec\.override\.enableShellInRendering: true/);
      await check(root, true);
    }
  });

  void it("refuses an explicit YAML tag, which go-yaml reads otherwise (!!binary becomes the decoded string kustomize reads)", async () => {
    const b64 = (text: string): string => Buffer.from(text).toString("base64");
    // The kustomization, the line of its tag, and the tag as named.
    const cases: [string, number, string][] = [
      [`configMapGenerator:\n- name: x\n  files: [!!binary ${b64(`leak=${outside}`)}]\n`, 3, "!!binary"],
      [
        `configMapGenerator:\n- name: x\n  files:\n  - !!binary |\n    ${b64("k=https://127.0.0.1/x")}\n`,
        4,
        "!!binary",
      ],
      ["configMapGenerator:\n- name: x\n  files: [!leak ok.txt]\n", 3, "!leak"],
      ["resources: [!!str ok.yaml]\n", 1, "!!str"],
      ["resources: [!<tag:yaml.org,2002:str> ok.yaml]\n", 1, "!!str"],
      ["resources: [! ok.yaml]\n", 1, "!"],
      ["%TAG !e! tag:example.com,2000:\n---\nresources: [!e!x ok.yaml]\n", 3, "!e!x"],
      ["!!str resources: [ok.yaml]\n", 1, "!!str"],
      ["configMapGenerator:\n- !!map {name: x, files: [ok.txt]}\n", 2, "!!map"],
      ["resources: !!seq\nnamespace: !!null\n", 1, "!!seq"],
    ];
    for (const [text, line, tag] of cases)
      await refused(
        await repo({ "config/kustomization.yaml": text }),
        new RegExp(`^config/kustomization\\.yaml: line ${line} uses the YAML tag ${tag}, .*stricter than Config Sync`),
      );
  });

  void it("refuses a merge key, quoted or not, which go-yaml lets override the keys beside it", async () => {
    for (const key of ["<<", '"<<"', "'<<'", '"\\x3c<"'])
      await refused(
        await repo({
          "config/kustomization.yaml": `configMapGenerator:\n- name: x\n  files: [ok.txt]\n  ${key}: {files: ["${outside}"]}\n`,
          "config/ok.txt": "ok\n",
        }),
        /config\/kustomization\.yaml: line 4 uses the YAML merge key <</,
      );
  });

  void it("refuses YAML anchors and aliases, whatever they point at", async () => {
    await refused(
      await repo({
        "config/kustomization.yaml": `files: &p ["${outside}"]\nconfigMapGenerator:\n- name: x\n  files: *p\n`,
      }),
      /line 1 uses the YAML anchor &p/,
    );
    // An alias without its anchor is a parse error, refused too.
    await refused(
      await repo({ "config/kustomization.yaml": "configMapGenerator:\n- name: x\n  files: *p\n" }),
      /alias \*p|not valid YAML/,
    );
  });

  void it("refuses tags, merge keys and aliases in plugin configurations, inline or in files", async () => {
    const b64 = Buffer.from(`leak=${outside}`).toString("base64");
    const head = "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\n";
    const configs: [string, RegExp][] = [
      [`${head}files: [!!binary ${b64}]\n`, /tag !!binary/],
      [`${head}files: [ok.txt]\n<<: {files: ["${outside}"]}\n`, /merge key <</],
      [`${head}files: [ok.txt]\n<<: {files: ["${outside}"]}\n`.replace("ok.txt", "!x ok.txt"), /tag !x/],
      [`${head}leak: &l ["${outside}"]\nfiles: *l\n`, /anchor &l/],
    ];
    for (const [config, why] of configs) {
      await refused(
        await repo({ "config/kustomization.yaml": y({ generators: [config] }) }),
        new RegExp(`generators entry \\(inline\\): line \\d+ uses the YAML ${why.source}`),
      );
      await refused(
        await repo({ "config/kustomization.yaml": y({ generators: ["gen.yaml"] }), "config/gen.yaml": config }),
        new RegExp(`config/gen\\.yaml: line \\d+ uses the YAML ${why.source}`),
        true,
      );
    }
  });

  void it("reads plain scalars as go-yaml does: a name YAML 1.1 takes for a number or a date is still checked as a path", async () => {
    // go-yaml hands kustomize these as strings (no sexagesimal numbers, dates as strings, `._` no float).
    for (const name of ["1:20", "2001-12-14", "._", "0o17"])
      await refused(
        await repo({
          "config/kustomization.yaml": `configMapGenerator:\n- name: x\n  files: [${name}]\n`,
          [`config/${name}`]: { link: outside },
        }),
        new RegExp(`"${name.replace(".", "\\.")}" is a symlink to .*secret-token, outside the repository`),
      );
  });

  void it("refuses a line break only go-yaml sees (a lone CR, NEL, LS, PS) in a kustomization or a plugin configuration, inline or in a file", async () => {
    const breaks: [string, RegExp][] = [
      ["\r", /a carriage return \(U\+000D\) without a line feed/],
      ["\u0085", /a next-line character \(U\+0085\)/],
      ["\u2028", /a line separator \(U\+2028\)/],
      ["\u2029", /a paragraph separator \(U\+2029\)/],
    ];
    const line = (why: RegExp, n: number): RegExp =>
      new RegExp(
        `: line ${n} holds ${why.source}.*, which kustomize's YAML parser \\(go-yaml\\) reads as a line break`,
      );
    for (const [lf, why] of breaks) {
      // To the JS library one entry `ok.txt<break>  - /secret`; to kustomize two.
      const k = `configMapGenerator:\n- name: x\n  files:\n  - ok.txt${lf}  - ${outside}\n`;
      await refused(await repo({ "config/kustomization.yaml": k, "config/ok.txt": "ok" }), line(why, 4));
      // A comment to the JS library, a key to kustomize.
      const hidden = `namePrefix: x-\n# note${lf}configMapGenerator:${lf}- name: x${lf}  files: ["${outside}"]\n`;
      await refused(await repo({ "config/kustomization.yaml": hidden }), line(why, 2));
      const gen = `apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\nfiles:\n- ok.txt${lf}- ${outside}\n`;
      await refused(
        await repo({ "config/kustomization.yaml": y({ generators: ["gen.yaml"] }), "config/gen.yaml": gen }),
        new RegExp(`config/gen\\.yaml${line(why, 6).source}`),
      );
      await refused(
        // JSON.stringify leaves NEL, LS and PS raw: escaped, they reach only the inline entry.
        await repo({ "config/kustomization.yaml": y({ generators: [gen] }).replace(/[\u0085\u2028\u2029]/g, escape) }),
        new RegExp(`generators entry \\(inline\\)${line(why, 6).source}`),
      );
    }
    // CRLF line ends are line ends to both.
    await check(
      await repo({
        "config/kustomization.yaml": "configMapGenerator:\r\n- name: x\r\n  files:\r\n  - ok.txt\r\n",
        "config/ok.txt": "ok",
      }),
    );
  });

  void it("refuses a value holding a next-line character (a double-quoted \\N or \\x85), which kustomize's hand-over to its builtin plugins folds into a space: `A\\NB` would read the file `A B`", async () => {
    const k = (field: string): string =>
      ({
        files: 'configMapGenerator:\n- name: x\n  files: ["leak=A\\NB"]\n',
        envs: 'secretGenerator:\n- name: x\n  envs: ["A\\x85B"]\n',
        path: 'patches:\n- path: "A\\NB"\n',
        valuesFile: 'helmCharts:\n- name: c\n  valuesFile: "A\\NB"\n',
        resources: 'resources: ["A\\NB"]\n',
      })[field] ?? "";
    for (const field of ["files", "envs", "path", "valuesFile", "resources"])
      await refused(
        await repo({ "config/kustomization.yaml": k(field), "config/A B": { link: outside } }),
        new RegExp(`config/kustomization\\.yaml: ${field} ".*A\\\\u0085B" holds a next-line character \\(U\\+0085\\)`),
      );
    const gen = 'apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\nfiles: ["A\\NB"]\n';
    await refused(
      await repo({ "config/kustomization.yaml": y({ generators: ["gen.yaml"] }), "config/gen.yaml": gen }),
      /generators entry \(ConfigMapGenerator\) in config\/gen\.yaml: files "A\\u0085B" holds a next-line character/,
    );
    // Other escapes of a double-quoted scalar are read alike.
    await check(
      await repo({ "config/kustomization.yaml": 'configMapGenerator:\n- name: x\n  files: ["A\\u0020B"]\n' }),
    );
  });

  void it("refuses a plain scalar of a plugin configuration that kustomize reads as a number, a bool or a time where the walk reads a path or name; quoted, it is the name", async () => {
    // kyaml's go-yaml v3 resolves these; kustomize then reads "10", "true" or "2001-12-14T00:00:00Z".
    const forms = ["012", "0x0A", "1_0", "+10", "0b1010", "1e1", "0o12", "10.0", ".5", "true", "2001-12-14", "-.inf"];
    const patch = (path: string): string =>
      `apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: ${path}\n`;
    for (const form of forms) {
      const kind = form === "true" ? "bool" : form === "2001-12-14" ? "timestamp" : "number";
      const why = `path ${form.replace(/[.+]/g, "\\$&")} is a plain YAML ${kind} to kustomize`;
      await refused(
        await repo({ "config/kustomization.yaml": y({ transformers: ["t.yaml"] }), "config/t.yaml": patch(form) }),
        new RegExp(`transformers entry \\(PatchTransformer\\) in config/t\\.yaml: ${why}`),
      );
      await refused(
        await repo({ "config/kustomization.yaml": y({ transformers: [patch(form)] }) }),
        new RegExp(`transformers entry \\(inline\\) \\(PatchTransformer\\): ${why}`),
      );
    }
    const gen = (fields: string): string =>
      `apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\n${fields}`;
    const chart = (fields: string): string =>
      `apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: x\nname: c\nreleaseName: c\n${fields}`;
    for (const [config, why] of [
      [gen("files: [ok.txt, 012]\n"), /files 012 is a plain YAML number/],
      [gen("envs: [2001-12-14]\n"), /envs 2001-12-14 is a plain YAML timestamp/],
      [chart("version: 1.10\nrepo: https://charts.example.com\n"), /version 1\.10 is a plain YAML number/],
      [chart("valuesFile: 0x10\n"), /valuesFile 0x10 is a plain YAML number/],
    ] as const)
      await refused(await repo({ "config/kustomization.yaml": y({ generators: [config] }), "config/ok.txt": "" }), why);
    // Quoted, or text to go-yaml (a name with letters, 1:20, ._), the scalar is the name kustomize reads.
    for (const path of ['"012"', "'1e1'", "1:20", "._", "10-patch.yaml", "0x1g"])
      await refused(
        await repo({
          "config/kustomization.yaml": y({ transformers: ["t.yaml"] }),
          "config/t.yaml": patch(path),
          [`config/${path.replace(/["']/g, "")}`]: { link: outside },
        }),
        /is a symlink to .*secret-token, outside the repository/,
      );
    // Fields the walk does not read as text keep their types: a chart's devel, includeCRDs, inline values.
    const root = await repo({
      "config/kustomization.yaml": y({
        generators: [
          chart(
            "repo: https://charts.example.com\nversion: 1.2.3\ndevel: true\nincludeCRDs: true\nvaluesInline: {n: 012, f: 1e1, d: 2001-12-14}\n",
          ),
        ],
      }),
    });
    const { pulls } = await checkKustomizationPaths(join(root, "config"), { repositoryRoot: root, allowRemote: false });
    assert.deepEqual(
      pulls.map((p) => [p.name, p.version, p.devel]),
      [["c", "1.2.3", true]],
    );
  });

  void it("refuses a kustomization or plugin configuration file that is not UTF-8, as go-yaml reads UTF-16", async () => {
    const utf16 = (text: string): string => `\ufeff${text}`;
    const k = `configMapGenerator:\n- name: x\n  files: ["${outside}"]\n`;
    for (const encoding of ["utf16le", "utf16be"] as const) {
      const root = await repo({});
      const bytes = Buffer.from(utf16(k), "utf16le");
      if (encoding === "utf16be") bytes.swap16();
      await writeFile(join(root, "config", "kustomization.yaml"), bytes);
      await refused(root, /config\/kustomization\.yaml is not UTF-8 \(UTF-16\)/);
    }
    const gen = await repo({ "config/kustomization.yaml": y({ generators: ["gen.yaml"] }) });
    const config = `apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\nfiles: ["${outside}"]\n`;
    await writeFile(join(gen, "config", "gen.yaml"), Buffer.from(utf16(config), "utf16le"));
    await refused(gen, /config\/gen\.yaml is not UTF-8 \(UTF-16\)/);
    const latin1 = await repo({});
    await writeFile(join(latin1, "config", "kustomization.yaml"), Buffer.from("# caf\xe9\nresources: []\n", "latin1"));
    await refused(latin1, /config\/kustomization\.yaml is not UTF-8/);
  });

  void it("accepts a plain kustomization with scalars of every kind, and tag-, anchor- or merge-like text in strings and comments", async () => {
    const root = await repo({
      "config/kustomization.yaml": [
        "\ufeff# a comment with !!binary, &anchor, *alias and <<: merge",
        "namespace: ~",
        "commonLabels: {date: 2001-12-14, n: 1:20, on: yes, f: .5, e: 1e3, h: 0x1F, nothing: null, empty: }",
        'commonAnnotations: {tag: "!!binary x", anchor: "&a", alias: "*a", merge: "<<", plain: a!b&c*d}',
        "replicas: [{name: web, count: 3}]",
        "resources:",
        "  - cm.yaml # !tag",
        "configMapGenerator:",
        "  - name: x",
        `    files: ["k=ok.txt", 'ok.txt']`,
        "    options: {disableNameSuffixHash: true}",
        "---",
        "resources: []",
        "",
      ].join("\n"),
      "config/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
      "config/ok.txt": "ok\n",
    });
    await check(root);
  });

  void it("follows nested kustomizations, and accepts files elsewhere in the same repository", async () => {
    const root = await repo({
      "config/kustomization.yaml": y({
        resources: ["../base", "cm.yaml"],
        configMapGenerator: [{ name: "shared", files: ["s=../shared/settings.txt"], envs: ["../shared/env"] }],
        helmCharts: [{ name: "tiny", releaseName: "rel.v1" }],
        patchesStrategicMerge: ["apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"],
      }),
      "config/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
      "config/charts/tiny/Chart.yaml": "name: tiny\n",
      "config/charts/tiny/link": { link: "Chart.yaml" },
      "base/kustomization.yaml": y({ resources: ["../common"] }),
      "common/kustomization.yaml": y({ resources: ["../base"] }), // a cycle kustomize reports itself
      "shared/settings.txt": "a=b\n",
      "shared/env": "A=B\n",
    });
    await check(root);
    const bad = await repo({
      "config/kustomization.yaml": y({ resources: ["../base"] }),
      "base/kustomization.yaml": y({ configMapGenerator: [{ name: "x", files: ["../../secret-token"] }] }),
    });
    await refused(bad, /base\/kustomization\.yaml: configMapGenerator\[\]\.files entry/);
  });

  void it("returns the charts kustomize would pull, each with the chart home kustomize gives it; none with shell access, where kustomize pulls into the same chart homes itself; a field given twice is refused", async () => {
    const repoUrl = "https://charts.example";
    const root = await repo({
      "config/kustomization.yaml": y({
        resources: ["../base"],
        helmGlobals: { chartHome: "pulled" },
        helmCharts: [{ name: "a", repo: repoUrl, version: "1.0.0", devel: "yes" }, { name: "local" }],
        generators: ["gen.yaml"],
      }),
      "config/gen.yaml": y({
        apiVersion: "builtin",
        kind: "HelmChartInflationGenerator",
        metadata: { name: "g" },
        name: "b",
        repo: "oci://registry.example/charts",
        chartHome: "gen-charts",
      }),
      "config/pulled/local/Chart.yaml": "name: local\n",
      "base/kustomization.yaml": y({
        helmChartInflationGenerator: [
          { chartName: "c", chartRepoUrl: repoUrl, chartHome: "old" },
          { chartName: "d", chartRepoUrl: repoUrl, chartHome: "" },
        ],
      }),
    });
    const walked = await checkKustomizationPaths(join(root, "config"), { repositoryRoot: root, allowRemote: false });
    const config = join(await realpath(root), "config");
    const base = join(await realpath(root), "base");
    assert.deepEqual(
      walked.pulls.map(({ dir, chartHome, name, repo: r, version, devel }) => [
        dir,
        chartHome,
        name,
        r,
        version,
        devel,
      ]),
      [
        [base, "old", "c", repoUrl, "", false],
        [base, "old", "d", repoUrl, "", false],
        [config, "gen-charts", "b", "oci://registry.example/charts", "", false],
        [config, "pulled", "a", repoUrl, "1.0.0", true],
      ],
    );
    const homes = [join(base, "old"), join(config, "gen-charts"), join(config, "pulled", "a-1.0.0")];
    assert.deepEqual(walked.chartHomes, homes);
    // With shell access kustomize pulls them itself, into the same homes (the mirror's, not the checkout's).
    assert.deepEqual(await checkKustomizationPaths(join(root, "config"), { repositoryRoot: root, allowRemote: true }), {
      pulls: [],
      chartHomes: homes,
    });
    const twice = await repo({
      "config/kustomization.yaml": y({ helmCharts: [{ name: "a", repo: repoUrl, Repo: "https://other.example" }] }),
    });
    await refused(
      twice,
      /helmCharts repo is given more than once \("https:\/\/charts\.example", "https:\/\/other\.example"\)/,
    );
    // Shell access refuses no more than before: every home kustomize could pick for either reading is reported.
    const shell = await repo({
      "config/kustomization.yaml": y({
        helmCharts: [
          { name: "a", repo: repoUrl, Repo: "https://other.example", version: "1.0.0", Version: "2.0.0" },
          { name: "local" },
        ],
      }),
    });
    const shellConfig = join(await realpath(shell), "config");
    assert.deepEqual(
      await checkKustomizationPaths(join(shell, "config"), { repositoryRoot: shell, allowRemote: true }),
      { pulls: [], chartHomes: [join(shellConfig, "charts", "a-1.0.0"), join(shellConfig, "charts", "a-2.0.0")] },
    );
  });
});
