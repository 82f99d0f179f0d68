import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DriftlessError, ErrorClass, KnvCode } from "./errors.ts";
import { combineSummaries, knvNumber, statusErrors, toConfigSyncError } from "./status.ts";

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
  void it("writes the bare number as code and prefixes the message with KNVxxxx", () => {
    assert.deepEqual(toConfigSyncError(applyError("web")), {
      code: "2009",
      errorMessage: "KNV2009: apply of web failed",
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
    assert.deepEqual(toConfigSyncError(plain), { code: "2004", errorMessage: "KNV2004: unreachable" });
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

  void it("cuts very long messages and says so", () => {
    const long = toConfigSyncError(applyError("web", "x".repeat(10_000)), 100);
    assert.equal(long.errorMessage.length, 100);
    assert.ok(long.errorMessage.endsWith("(truncated)"));
  });
});

void describe("statusErrors", () => {
  void it("keeps at most maxErrors and counts the rest in the summary", () => {
    const errors = Array.from({ length: 7 }, (_, i) => applyError(`web-${i}`));
    const result = statusErrors(errors, { maxErrors: 5 });
    assert.equal(result.errors?.length, 5);
    assert.deepEqual(result.errorSummary, { totalCount: 7, truncated: true, errorCountAfterTruncation: 5 });
  });

  void it("drops exact duplicates before counting", () => {
    const result = statusErrors([applyError("web"), applyError("web"), applyError("api")]);
    assert.equal(result.errors?.length, 2);
    assert.deepEqual(result.errorSummary, { totalCount: 2, truncated: false, errorCountAfterTruncation: 2 });
  });

  void it("omits the errors field when there are none", () => {
    assert.deepEqual(statusErrors([]), {
      errorSummary: { totalCount: 0, truncated: false, errorCountAfterTruncation: 0 },
    });
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
