import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseAllDocuments, stringify } from "yaml";
import { fastParseYaml } from "./fast-yaml.ts";
import { SourceLimits } from "./limits.ts";
import { yamlOptions } from "./yaml-options.ts";

/** What the general parser makes of `text`, or undefined if it reports any error. */
function general(text: string): unknown[] | undefined {
  const docs = parseAllDocuments(text, yamlOptions);
  if (docs.some((doc) => doc.errors.length > 0)) return undefined;
  try {
    return docs.map((doc) => doc.toJS({ maxAliasCount: 100 }) as unknown);
  } catch {
    return undefined;
  }
}

/** The fast path may give up, but whenever it answers, the general parser must agree exactly. */
function assertAgrees(text: string): boolean {
  const fast = fastParseYaml(text);
  if (fast === undefined) return false;
  assert.deepEqual(fast, general(text), `fast path disagrees on:\n${text}`);
  return true;
}

void describe("fastParseYaml", () => {
  void it("reads the usual manifest shapes exactly as the general parser does", () => {
    const samples = [
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # trailing comment\n  labels: {}\ndata:\n  mode: 'on'\n  port: \"8080\"\n  count: '1'\n",
      '# leading comment\n---\napiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.25\n        args: []\n        ports:\n        - containerPort: 80\n          protocol: TCP\n      -   name: side\n          env:\n            - name: X\n              value: "it\'s"\n',
      "a:\n- 1\n- -2.5\n- 0x1F\n- 0777\n- ~\n- null\n- yes\n- Off\n- 1_000\nb: x\n",
      "data:\n  script: |\n    #!/bin/sh\n    echo hi\n\n    exit 0\n  strip: |-\n      indented\n        more\n  keep: |+\n    k\n\n\nother: 'it''s'\n",
      "a: 1\n---\n---\n# only comment\n---\nb: 2\n",
      "list:\n-\n- nested\n-\n  deeper: true\n",
      "key with spaces: value with a:colon, [brackets] and {braces}\n",
      'url: http://example.com:8080/path#frag\nempty:\nquoted: ""\n',
    ];
    for (const sample of samples) assert.equal(assertAgrees(sample), true, sample);
  });

  void it("gives up on what it does not handle, leaving it to the general parser", () => {
    const unsupported = [
      "a: &x 1\nb: *x\n",
      "a: !!str 1\n",
      "a: {b: 1}\n",
      "a: [1, 2]\n",
      "a: >\n  folded\n",
      "a: |2\n   x\n",
      'a: "esc\\n"\n',
      'a: "multi\n  line"\n',
      "a: plain\n  continued\n",
      "y: 1\n",
      "8080: http\n",
      "a: 1\na: 2\n",
      "<<: {a: 1}\n",
      "a:\tb\n",
      "a: 1\r\nb: 2\r\n",
      "%YAML 1.1\n---\na: 1\n",
      "- a\n- b\n",
      "a: b: c\n",
      "a: 'x' y\n",
      "? complex\n: key\n",
      "a: |\n  no final newline",
    ];
    for (const text of unsupported) assert.equal(fastParseYaml(text), undefined, text);
  });

  void it("gives up past the nesting limit, so the general parser reports the file instead of the stack overflowing", () => {
    const nested = (depth: number, leaf: string): string => {
      let text = "";
      for (let i = 0; i < depth - 1; i++) text += `${" ".repeat(i)}k:\n`;
      return `${text}${" ".repeat(depth - 1)}k: ${leaf}\n`;
    };
    assert.equal(assertAgrees(nested(SourceLimits.maxDepth, "x")), true);
    assert.equal(assertAgrees(nested(SourceLimits.maxDepth - 1, "{}")), true);
    assert.equal(fastParseYaml(nested(SourceLimits.maxDepth + 1, "x")), undefined);
    assert.equal(fastParseYaml(nested(SourceLimits.maxDepth, "[]")), undefined);
  });

  void it("agrees with the general parser on generated documents in many styles", () => {
    // Mostly ordinary manifest text, with a steady share of the awkward cases.
    const key = fc.oneof(
      { arbitrary: fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9._/-]{0,12}$/), weight: 8 },
      {
        arbitrary: fc.constantFrom("a b", "a:b", "y", "on", "8080", "true", "~", "-x", "é", "__proto__", "<<"),
        weight: 1,
      },
    );
    const text = fc.oneof(
      { arbitrary: fc.stringMatching(/^[a-zA-Z0-9 ._:/@=-]{0,16}$/), weight: 6 },
      {
        arbitrary: fc.constantFrom(
          "",
          " ",
          "on",
          "yes",
          "y",
          "~",
          "null",
          "0777",
          "0x1F",
          "1_000",
          "1e3",
          ".inf",
          "12:30",
          "2024-01-02",
          "a: b",
          "a #b",
          "#x",
          "- x",
          "'",
          '"',
          "it's",
          "\\n",
          "x\ny",
          "x\n\ny\n",
          " lead",
          "trail ",
          "{}",
          "[]",
          "&a",
          "*a",
          "!t",
          "|",
          ">",
        ),
        weight: 3,
      },
      { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
    );
    const scalar = fc.oneof(
      text,
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    );
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("array"), tie("object")),
      array: fc.array(tie("tree"), { maxLength: 4 }),
      object: fc.dictionary(key, tie("tree"), { maxKeys: 5 }),
    }));
    const style = fc.record({
      indent: fc.constantFrom(2, 4),
      indentSeq: fc.boolean(),
      defaultStringType: fc.constantFrom(
        "PLAIN",
        "QUOTE_DOUBLE",
        "QUOTE_SINGLE",
        "BLOCK_LITERAL",
      ) as fc.Arbitrary<"PLAIN">,
      defaultKeyType: fc.constantFrom(null, "PLAIN") as fc.Arbitrary<null>,
      lineWidth: fc.constantFrom(0, 20, 80),
    });
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(key, tree, { minKeys: 1, maxKeys: 6 }), { minLength: 1, maxLength: 3 }),
        style,
        (docs, options) => {
          const source = docs.map((doc) => stringify(doc, { ...options, version: "1.1" })).join("---\n");
          if (assertAgrees(source)) accepted++;
        },
      ),
      { numRuns: 1500 },
    );
    // The property is only meaningful if the fast path takes a good share of the inputs.
    assert.ok(accepted > 150, `fast path accepted only ${accepted} of 1500 generated documents`);
  });

  void it("never accepts text the general parser rejects or reads differently (random line soup)", () => {
    const piece = fc.constantFrom(
      "a",
      "b",
      "y",
      "1",
      "-",
      "- ",
      ":",
      ": ",
      " ",
      "  ",
      "#",
      " #",
      "'",
      '"',
      "|",
      "|-",
      "|+",
      "\n",
      "\n  ",
      "\n    ",
      "\n- ",
      "---\n",
      "x: ",
      "{}",
      "[]",
      "~",
    );
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        if (assertAgrees(pieces.join(""))) accepted++;
      }),
      { numRuns: 5000 },
    );
    assert.ok(accepted > 250, `fast path accepted only ${accepted} of 5000 random texts`);
  });
});
