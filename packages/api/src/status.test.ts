import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DriftlessError, ErrorClass, KnvCode } from "./errors.ts";
import {
  combineSummaries,
  knvErrorText,
  knvNumber,
  stalledMessage,
  statusErrors,
  toConfigSyncError,
} from "./status.ts";

const link = (n: string): string => `\n\nFor more information, see https://g.co/cloud/acm-errors#knv${n}`;

/** How Config Sync's status.PrintResource prints applyError's Deployment after the message. */
const webBlock = (name: string): string =>
  `\n\nsource: ${name}.yaml\nnamespace: shop\nmetadata.name: ${name}\ngroup: apps\nversion: v1\nkind: Deployment`;

function applyError(name: string, message = `apply of ${name} failed`): DriftlessError {
  return new DriftlessError({
    code: KnvCode.Apply,
    errorClass: ErrorClass.Retry,
    message,
    resources: [
      { group: "apps", version: "v1", kind: "Deployment", namespace: "shop", name, sourcePath: `${name}.yaml` },
    ],
  });
}

void describe("toConfigSyncError", () => {
  void it("writes the bare number as code, prefixes the message with KNVxxxx, prints the object and ends with Config Sync's link", () => {
    assert.deepEqual(toConfigSyncError(applyError("web")), {
      code: "2009",
      errorMessage: `KNV2009: apply of web failed${webBlock("web")}${link("2009")}`,
      errorResources: [
        {
          sourcePath: "web.yaml",
          name: "web",
          namespace: "shop",
          gvk: { group: "apps", version: "v1", kind: "Deployment" },
        },
      ],
    });
  });

  void it("omits errorResources when the error is about no object, and always writes all gvk fields", () => {
    const plain = new DriftlessError({
      code: KnvCode.SourceFetch,
      errorClass: ErrorClass.Retry,
      message: "unreachable",
    });
    assert.deepEqual(toConfigSyncError(plain), {
      code: "2004",
      errorMessage: `KNV2004: unreachable${link("2004")}`,
    });
    const core = new DriftlessError({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      message: "x",
      resources: [{ group: "", kind: "Namespace", name: "shop" }],
    });
    assert.deepEqual(toConfigSyncError(core).errorResources, [
      { name: "shop", gvk: { group: "", version: "", kind: "Namespace" } },
    ]);
  });

  void it("prints each object the error names as Config Sync's resource errors do, the file from the repository root (e2e TestNamespaceRepo_Centralized's refused get)", () => {
    const refused = new DriftlessError({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Terminal,
      message: 'failed to apply Deployment.apps, bookstore/hello-world: deployments.apps "hello-world" is forbidden',
      resources: [
        {
          group: "apps",
          version: "v1",
          kind: "Deployment",
          namespace: "bookstore",
          name: "hello-world",
          sourcePath: "deployment.yaml",
        },
      ],
    });
    const cse = toConfigSyncError(refused, undefined, (r) => `acme/${r.sourcePath ?? ""}`);
    assert.equal(
      cse.errorMessage,
      'KNV2009: failed to apply Deployment.apps, bookstore/hello-world: deployments.apps "hello-world" is forbidden' +
        "\n\nsource: acme/deployment.yaml\nnamespace: bookstore\nmetadata.name: hello-world\ngroup: apps\nversion: v1\nkind: Deployment" +
        link("2009"),
    );
    assert.equal(cse.errorResources?.[0]?.sourcePath, "acme/deployment.yaml");
    // A core, cluster-scoped object without a file: no source or namespace line, no space after `group:`.
    const namespace = new DriftlessError({
      code: KnvCode.ManagementConflict,
      errorClass: ErrorClass.Terminal,
      message: "conflict",
      resources: [
        { group: "", version: "v1", kind: "Namespace", name: "shipping" },
        { group: "", version: "v1", kind: "Namespace", name: "billing" },
      ],
    });
    assert.equal(
      toConfigSyncError(namespace).errorMessage,
      "KNV1060: conflict\n\nmetadata.name: billing\ngroup:\nversion: v1\nkind: Namespace" +
        "\n\nmetadata.name: shipping\ngroup:\nversion: v1\nkind: Namespace" +
        link("1060"),
    );
  });

  void it("cuts the body of very long messages and says so, and keeps the link whole", () => {
    const long = toConfigSyncError(applyError("web", "x".repeat(10_000)), 100);
    assert.equal(long.errorMessage.length, 100);
    assert.ok(long.errorMessage.startsWith("KNV2009: xxx"), long.errorMessage);
    assert.ok(long.errorMessage.endsWith(`xxx ... (truncated)${link("2009")}`), long.errorMessage);
    const whole = toConfigSyncError(applyError("web", "x".repeat(10_000)));
    assert.ok(whole.errorMessage.endsWith(`(truncated)${link("2009")}`));
  });

  void it("links a KNV code only: another code keeps its bare message", () => {
    assert.equal(knvErrorText("KNV1009", "wrong namespace"), `KNV1009: wrong namespace${link("1009")}`);
    assert.equal(knvErrorText("E42", "other"), "E42: other");
  });
});

void describe("statusErrors", () => {
  void it("keeps at most maxErrors and counts the rest in the summary", () => {
    const errors = Array.from({ length: 7 }, (_, i) => applyError(`web-${i}`));
    const result = statusErrors(errors, { maxErrors: 5 });
    assert.equal(result.errors?.length, 5);
    assert.deepEqual(result.errorSummary, { totalCount: 7, truncated: true, errorCountAfterTruncation: 5 });
  });

  void it("lists every error by default, as Config Sync does", () => {
    const errors = Array.from({ length: 120 }, (_, i) => applyError(`web-${i}`));
    const result = statusErrors(errors);
    assert.equal(result.errors?.length, 120);
    assert.deepEqual(result.errorSummary, { totalCount: 120, errorCountAfterTruncation: 120 });
  });

  void it("keeps the first 1/denominator of the errors, as Config Sync's retries of a status too large", () => {
    const errors = Array.from({ length: 7 }, (_, i) => applyError(`web-${i}`));
    const result = statusErrors(errors, { denominator: 2 });
    assert.deepEqual(
      result.errors?.map((e) => e.errorResources?.[0]?.name),
      ["web-0", "web-1", "web-2"],
    );
    assert.deepEqual(result.errorSummary, { totalCount: 7, truncated: true, errorCountAfterTruncation: 3 });
  });

  void it("drops exact duplicates before counting", () => {
    const result = statusErrors([applyError("web"), applyError("web"), applyError("api")]);
    assert.equal(result.errors?.length, 2);
    // As Config Sync's omitempty fields marshal: `truncated` only when true.
    assert.deepEqual(result.errorSummary, { totalCount: 2, errorCountAfterTruncation: 2 });
  });

  void it("omits the errors field when there are none, and its summary is empty, as Config Sync writes it", () => {
    assert.deepEqual(statusErrors([]), { errorSummary: {} });
  });
});

void describe("summaries and codes", () => {
  void it("adds up summaries of several status fields", () => {
    assert.deepEqual(
      combineSummaries([
        { totalCount: 3, truncated: false, errorCountAfterTruncation: 3 },
        undefined,
        { totalCount: 80, truncated: true, errorCountAfterTruncation: 50 },
      ]),
      { totalCount: 83, truncated: true, errorCountAfterTruncation: 53 },
    );
  });

  void it("strips the KNV prefix", () => {
    assert.equal(knvNumber("KNV1061"), "1061");
    assert.equal(knvNumber("1061"), "1061");
  });
});

void describe("stalledMessage", () => {
  void it("is one error's text, as Config Sync's SetStalled writes err.Error()", () => {
    // The message alone, without the objects errors[] print: the manager's setup failures name none in Config Sync.
    assert.equal(stalledMessage([applyError("web")]), `KNV2009: apply of web failed${link("2009")}`);
  });

  void it("prints several as Config Sync's status.MultiError does: counted, sorted, numbered, without duplicates", () => {
    const b = `KNV2009: apply of b failed${link("2009")}`;
    const a = `KNV2009: apply of a failed${link("2009")}`;
    assert.equal(
      stalledMessage([applyError("b"), applyError("a"), applyError("b")]),
      `2 error(s)\n\n\n[1] ${a}\n\n\n[2] ${b}\n`,
    );
  });
});
