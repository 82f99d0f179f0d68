import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { KnvCode } from "@driftless/api";
import { paxHeaderBlocks, rawTarBlocks, rawTarGz } from "@driftless/oci/testing";
import { externalSchemaReference } from "./chart-schemas.ts";
import { checkKustomizationPaths } from "./kustomization-paths.ts";
import { RenderingError } from "./render-error.ts";
import { defaultRenderToolsDir } from "./render-tools.ts";

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), "driftless-schemas-"));
});
after(() => rm(scratch, { recursive: true, force: true }));

let count = 0;
/** A checkout whose config/ kustomization renders chart `c` from `files` (paths below charts/c). */
async function chartRepo(files: Record<string, string | Buffer>): Promise<string> {
  const root = join(scratch, `repo-${count++}`);
  const all = {
    "config/kustomization.yaml": JSON.stringify({ helmCharts: [{ name: "c" }] }),
    "config/charts/c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    ...Object.fromEntries(Object.entries(files).map(([path, content]) => [`config/charts/c/${path}`, content])),
  };
  for (const [path, content] of Object.entries(all)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

const check = (root: string, allowRemote = false): Promise<unknown> =>
  checkKustomizationPaths(join(root, "config"), { repositoryRoot: root, allowRemote });

/** A subchart archive (tar with gzip, as helm package writes one) holding `sub/<path>` for each file. */
async function archive(files: Record<string, string | Buffer>): Promise<Buffer> {
  const dir = join(scratch, `archive-${count++}`);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, "sub", path)), { recursive: true });
    await writeFile(join(dir, "sub", path), content);
  }
  return execFileSync("tar", ["-czf", "-", "-C", dir, "sub"]);
}

const schema = (obj: unknown): string => JSON.stringify(obj);

void describe("chart schemas", () => {
  void it("finds a reference helm would load from outside the schema: $ref, $dynamicRef, $recursiveRef, or a $schema that is not a standard draft", () => {
    for (const ref of ["http://10.0.0.1/x", "file:///proc/1/environ", "etc/passwd", "other.json#/a", "urn:x"])
      assert.equal(
        externalSchemaReference({ properties: { a: { items: [{ $ref: ref }] } } }),
        `$ref ${JSON.stringify(ref)}`,
      );
    assert.match(externalSchemaReference({ $defs: { a: { $dynamicRef: "https://x/y" } } }) ?? "", /^\$dynamicRef/);
    assert.match(externalSchemaReference({ $recursiveRef: "x.json" }) ?? "", /^\$recursiveRef/);
    assert.match(externalSchemaReference({ $schema: "http://10.0.0.1/meta" }) ?? "", /^\$schema/);
    // References inside the document, and the drafts helm knows, load nothing.
    assert.equal(
      externalSchemaReference({
        $schema: "http://json-schema.org/draft-07/schema#",
        $id: "https://example.com/chart",
        definitions: { n: { type: "integer" } },
        properties: { a: { $ref: "#/definitions/n" }, b: { $ref: "#" }, $ref: { type: "object" } },
      }),
      undefined,
    );
    assert.equal(externalSchemaReference({ $schema: "https://json-schema.org/draft/2020-12/schema" }), undefined);
    // helm's name for its latest draft, as Bitnami's charts write it.
    assert.equal(externalSchemaReference({ $schema: "http://json-schema.org/schema#" }), undefined);
    assert.match(externalSchemaReference({ $schema: "http://json-schema.org/schema/other" }) ?? "", /^\$schema/);
    // A schema within helm's 5 MiB per file: an enum of 300,000 values before the reference.
    const wide = { enum: new Array<number>(300_000).fill(0), items: { $ref: "file:///etc/hostname" } };
    assert.equal(externalSchemaReference(wide), '$ref "file:///etc/hostname"');
    assert.equal(externalSchemaReference({ anyOf: [{ enum: wide.enum }] }), undefined);
  });

  void it("refuses a chart whose values.schema.json, or a subchart's (a directory or a .tgz archive, nested too), refers outside itself", async () => {
    const bad = schema({ type: "object", properties: { a: { $ref: "file:///var/run/secrets/token.json" } } });
    const refused = async (root: string, why: RegExp): Promise<void> =>
      assert.rejects(check(root), (error: unknown) => {
        assert.ok(error instanceof RenderingError, String(error));
        assert.equal(error.code, KnvCode.Rendering);
        assert.match(error.message, why);
        return true;
      });
    await refused(
      await chartRepo({ "values.schema.json": bad }),
      /config\/charts\/c\/values.schema.json refers to \$ref "file:\/\/\/var\/run\/secrets\/token.json"/,
    );
    await refused(
      await chartRepo({ "charts/sub/values.schema.json": bad }),
      /charts\/c\/charts\/sub\/values.schema.json refers to \$ref/,
    );
    const sub = await archive({ "Chart.yaml": "name: sub\n", "values.schema.json": bad });
    await refused(
      await chartRepo({ "charts/sub-0.1.0.tgz": sub }),
      /charts\/sub-0.1.0.tgz:sub\/values.schema.json refers to \$ref/,
    );
    const outer = await archive({ "Chart.yaml": "name: sub\n", "charts/inner-0.1.0.tgz": sub });
    await refused(
      await chartRepo({ "charts/sub-0.1.0.tgz": outer }),
      /sub-0.1.0.tgz:sub\/charts\/inner-0.1.0.tgz:sub\/values.schema.json refers to \$ref/,
    );
    await refused(await chartRepo({ "charts/sub-0.1.0.tgz": "not gzip" }), /cannot be read as a chart archive/);
    await refused(await chartRepo({ "values.schema.json": "{ not json" }), /is not valid JSON/);
    // With shell access the repository's code runs anyway: its schemas are left to helm.
    await check(await chartRepo({ "values.schema.json": bad }), true);
  });

  void it("reads a subchart archive's entries as helm does: a schema hidden by its name, its type or a misleading size is found", async () => {
    // The real helm is the judge: each archive makes it load a file outside the chart into its error, so the
    // trick is real; the check must refuse every one of them.
    const outside = join(scratch, "outside.json");
    await writeFile(outside, schema({ const: "FROM-OUTSIDE-THE-CHART" }));
    const hostile = schema({ type: "object", properties: { a: { $ref: `file://${outside}` } } });
    const schemaEntry = (name: string, flag = "0"): Buffer => rawTarBlocks({ name, flag, content: hostile });
    const tricks: [string, Buffer[]][] = [
      ["a name written with backslashes", [schemaEntry("sub\\values.schema.json")]],
      ["a trailing slash", [schemaEntry("sub/values.schema.json/")]],
      ["a '.' segment", [schemaEntry("sub/values.schema.json/.")]],
      ["a type flag tar does not define", [schemaEntry("sub/values.schema.json", "Z")]],
      [
        "a pax size that says the entry before it is empty",
        [
          paxHeaderBlocks({ size: "0" }),
          rawTarBlocks({ name: "sub/README", flag: "0", content: schemaEntry("sub/values.schema.json") }),
        ],
      ],
      [
        "a GNU long name that wins over the pax path",
        [
          rawTarBlocks({ name: "././@LongLink", flag: "L", content: "sub/values.schema.json\0" }),
          paxHeaderBlocks({ path: "sub/values.yaml" }),
          rawTarBlocks({ name: "sub/x", flag: "0", content: hostile }),
        ],
      ],
      [
        "an old-style (type NUL) entry named as a directory, whose header claims content",
        [rawTarBlocks({ name: "sub/d/", flag: "", content: schemaEntry("sub/values.schema.json") })],
      ],
      [
        "a directory whose header claims content",
        [rawTarBlocks({ name: "sub/d/", flag: "5", content: schemaEntry("sub/values.schema.json") })],
      ],
    ];
    const helm = join(defaultRenderToolsDir() ?? assert.fail("no render tools: run npm test's setup"), "helm");
    for (const [trick, blocks] of tricks) {
      const sub = rawTarGz([
        rawTarBlocks({ name: "sub/Chart.yaml", flag: "0", content: "apiVersion: v2\nname: sub\nversion: 0.1.0\n" }),
        rawTarBlocks({ name: "sub/values.yaml", flag: "0", content: "a: x\n" }),
        ...blocks,
      ]);
      const root = await chartRepo({ "charts/sub-0.1.0.tgz": sub });
      const helmRun = spawnSync(helm, ["template", "r", join(root, "config", "charts", "c")], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: scratch },
      });
      assert.match(helmRun.stderr, /FROM-OUTSIDE-THE-CHART/, `${trick}: helm did not load the hidden schema`);
      await assert.rejects(
        check(root),
        (error: unknown) => error instanceof RenderingError && /refers to \$ref "file:/.test(error.message),
        `${trick}: the check let the schema through`,
      );
    }
  });

  void it("bounds the bytes all of a chart's archives decompress to together, not only each archive's", async () => {
    // Each inner archive stays within helm's per-archive bound (90 MiB of zeros, ~90 KiB compressed); three of
    // them nested in one archive would make the work grow with every level of nesting.
    const inner = await archive({ "Chart.yaml": "name: sub\n", "zeros.bin": Buffer.alloc(90 * 1024 * 1024) });
    const outer = await archive({
      "Chart.yaml": "name: sub\n",
      "charts/a-0.1.0.tgz": inner,
      "charts/b-0.1.0.tgz": inner,
      "charts/c-0.1.0.tgz": inner,
    });
    await assert.rejects(check(await chartRepo({ "charts/sub-0.1.0.tgz": outer })), (error: unknown) => {
      assert.ok(error instanceof RenderingError, String(error));
      assert.match(error.message, /archives together decompress to more than 268435456 bytes/);
      return true;
    });
    // One of them alone is checked.
    await check(await chartRepo({ "charts/sub-0.1.0.tgz": inner }));
  });

  void it("accepts charts whose schemas refer only inside themselves", async () => {
    const good = schema({
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { port: { type: "integer" } },
      properties: { port: { $ref: "#/definitions/port" } },
    });
    const sub = await archive({ "Chart.yaml": "name: sub\n", "values.schema.json": good });
    await check(await chartRepo({ "values.schema.json": good, "charts/sub-0.1.0.tgz": sub }));
  });
});
