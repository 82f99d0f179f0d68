import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import {
  KubeApiError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isResourceTypeMissing,
  isTooManyRequests,
} from "./errors.ts";

function fromCode(code: number, reason?: string): KubeApiError {
  return KubeApiError.fromStatus({ code, ...(reason === undefined ? {} : { reason }), message: "m" }, code, "op");
}

void describe("KubeApiError classification", () => {
  void it("retries conflicts, gone, throttling, server errors and network failures", () => {
    for (const code of [409, 410, 429, 500, 503, 504]) {
      const e = fromCode(code);
      assert.equal(e.errorClass, ErrorClass.Retry, `HTTP ${code}`);
      assert.equal(e.code, KnvCode.ApiServer);
    }
    const network = KubeApiError.network("get ConfigMap ns/a", new Error("ECONNREFUSED"));
    assert.equal(network.status, 0);
    assert.equal(network.reason, "NetworkError");
    assert.equal(network.retryable, true);
  });

  void it("makes permission failures terminal KNV2013 and invalid objects terminal KNV2009", () => {
    assert.deepEqual(
      [fromCode(403).errorClass, fromCode(403).code],
      [ErrorClass.Terminal, KnvCode.InsufficientPermission],
    );
    assert.deepEqual(
      [fromCode(401).errorClass, fromCode(401).code],
      [ErrorClass.Terminal, KnvCode.InsufficientPermission],
    );
    assert.deepEqual(
      [fromCode(422, "Invalid").errorClass, fromCode(422, "Invalid").code],
      [ErrorClass.Terminal, KnvCode.Apply],
    );
    assert.deepEqual([fromCode(400).errorClass, fromCode(400).code], [ErrorClass.Terminal, KnvCode.Apply]);
  });

  void it("tells a missing object (terminal) from a resource type that is not served (stalled)", () => {
    const object = KubeApiError.fromStatus(
      {
        code: 404,
        reason: "NotFound",
        message: 'configmaps "a" not found',
        details: { name: "a", kind: "configmaps" },
      },
      404,
      "get ConfigMap ns/a",
    );
    assert.equal(object.errorClass, ErrorClass.Terminal);
    const type = KubeApiError.fromHttp(404, "404 page not found\n", "get Widget.example.com ns/a");
    assert.equal(type.errorClass, ErrorClass.Stalled);
    assert.equal(type.code, KnvCode.UnknownObjectKind);
    assert.equal(type.reason, "NotFound");
    assert.ok(isNotFound(object) && isNotFound(type));
    assert.ok(isResourceTypeMissing(type) && !isResourceTypeMissing(object));
  });

  void it("answers the helpers from status and reason", () => {
    const exists = fromCode(409, "AlreadyExists");
    const conflict = fromCode(409, "Conflict");
    assert.ok(isAlreadyExists(exists) && !isConflict(exists));
    assert.ok(isConflict(conflict) && !isAlreadyExists(conflict));
    assert.ok(isGone(fromCode(410, "Expired")));
    assert.ok(isForbidden(fromCode(403)));
    assert.ok(isInvalid(fromCode(422, "Invalid")));
    assert.ok(isTooManyRequests(fromCode(429)));
    assert.ok(!isNotFound(new Error("404")));
    assert.ok(!isNotFound(undefined));
  });

  void it("is a DriftlessError with an actionable message, the resource and retryAfter", () => {
    const e = KubeApiError.fromStatus(
      { code: 429, reason: "TooManyRequests", message: "too many requests", details: { retryAfterSeconds: 2 } },
      429,
      "create ConfigMap ns/a",
      { resource: { group: "", kind: "ConfigMap", namespace: "ns", name: "a" } },
    );
    assert.ok(e instanceof DriftlessError);
    assert.equal(e.name, "KubeApiError");
    assert.equal(e.message, "create ConfigMap ns/a: too many requests (429 TooManyRequests)");
    assert.deepEqual(e.resources, [{ group: "", kind: "ConfigMap", namespace: "ns", name: "a" }]);
    assert.equal(e.retryAfterMs, 2000);
  });

  void it("takes the code from a watch ERROR Status even when the HTTP status was 200", () => {
    const e = KubeApiError.fromStatus(
      { status: "Failure", message: "too old resource version: 1 (5)", reason: "Expired", code: 410 },
      0,
      "watch configmaps",
    );
    assert.equal(e.status, 410);
    assert.equal(e.reason, "Expired");
    assert.ok(isGone(e));
  });

  void it("fills the reason from the code when the Status has none", () => {
    assert.equal(fromCode(503).reason, "ServiceUnavailable");
    assert.equal(KubeApiError.fromHttp(502, "<html>bad gateway</html>", "op").reason, "Unknown");
    assert.equal(KubeApiError.fromHttp(502, "<html>bad gateway</html>", "op").retryable, true);
  });
});
