import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OciFetchError } from "./errors.ts";
import { childByPlatform } from "./manifest.ts";

const digest = (n: number): string => `sha256:${String(n).repeat(64).slice(0, 64)}`;
const entry = (n: number, platform?: Record<string, string>): Record<string, unknown> => ({
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  digest: digest(n),
  size: 100,
  ...(platform === undefined ? {} : { platform }),
});

void describe("childByPlatform", () => {
  void it("takes an entry without a platform for linux/amd64, but compares a platform given whole, as go-containerregistry", () => {
    const index = (...manifests: Record<string, unknown>[]): Record<string, unknown> => ({ manifests });
    // A platform without its architecture is no linux/amd64: the later amd64 entry is the one.
    const osOnly = index(entry(1, { os: "linux" }), entry(2, { os: "linux", architecture: "amd64" }));
    assert.equal(childByPlatform(osOnly, "r/i", "r/i:v1").digest, digest(2));
    assert.equal(
      childByPlatform(index(entry(3), entry(2, { os: "linux", architecture: "amd64" })), "r/i", "r/i:v1").digest,
      digest(3),
    );
    assert.throws(
      () => childByPlatform(index(entry(1, { architecture: "amd64" })), "r/i", "r/i:v1"),
      (error: unknown) => error instanceof OciFetchError && /no child with platform linux\/amd64/.test(error.message),
    );
  });
});
