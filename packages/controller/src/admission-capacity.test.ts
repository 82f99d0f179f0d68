import { test } from "node:test";
import assert from "node:assert/strict";
import { AdmissionCapacity, DefaultAdmissionLimits } from "./admission-capacity.ts";

const MiB = 1024 * 1024;

test("the defaults: 3 MiB bodies, 32 requests, 24 MiB of bodies at once (8 of the largest), 512k JSON tokens", () => {
  assert.deepEqual(DefaultAdmissionLimits, {
    maxBodyBytes: 3 * MiB,
    maxConcurrent: 32,
    maxBytesInFlight: 24 * MiB,
    maxJsonTokens: 512 * 1024,
  });
});

test("requests are admitted against both the count and the byte budget; a chunked body counts as the largest", () => {
  const capacity = new AdmissionCapacity({ ...DefaultAdmissionLimits, maxConcurrent: 4, maxBytesInFlight: 7 * MiB });
  const chunked = capacity.tryAdmit(undefined);
  const large = capacity.tryAdmit(3 * MiB);
  assert.ok(chunked !== undefined && large !== undefined);
  assert.equal(capacity.tryAdmit(2 * MiB), undefined, "over the byte budget");
  const small = capacity.tryAdmit(1024);
  assert.ok(small !== undefined);
  assert.deepEqual(capacity.inFlight, { requests: 3, bytes: 6 * MiB + 1024 });
  large.releaseBytes();
  assert.deepEqual(capacity.inFlight, { requests: 3, bytes: 3 * MiB + 1024 });
  assert.ok(capacity.tryAdmit(0) !== undefined);
  assert.equal(capacity.tryAdmit(0), undefined, "over the count");
  large.release();
  large.release();
  assert.deepEqual(capacity.inFlight, { requests: 3, bytes: 3 * MiB + 1024 }, "released once only");
});
