import assert from "node:assert/strict";
import { test } from "node:test";
import { OciFailureReason, OciFetchError } from "./errors.ts";
import { parseImageReference, registryHost } from "./reference.ts";

const digest = `sha256:${"0123456789abcdef".repeat(4)}`;

test("reads registry, repository, tag and digest, with Docker's defaults for a bare name", () => {
  assert.deepEqual(parseImageReference("127.0.0.1:5000/config/app:v1"), {
    registry: "127.0.0.1:5000",
    repository: "config/app",
    tag: "v1",
    digest: undefined,
  });
  assert.deepEqual(parseImageReference(`registry.example/team/config@${digest}`), {
    registry: "registry.example",
    repository: "team/config",
    tag: undefined,
    digest,
  });
  assert.deepEqual(parseImageReference("nginx"), {
    registry: "docker.io",
    repository: "library/nginx",
    tag: "latest",
    digest: undefined,
  });
  assert.equal(parseImageReference("localhost/app:1").registry, "localhost");
  assert.equal(registryHost(parseImageReference("team/app")), "registry-1.docker.io");
});

test("refuses what is no image reference, as a terminal KNV2004", () => {
  for (const bad of ["", "Upper/Case:1", "app@sha256:short", "app:bad tag", "app:-x"]) {
    assert.throws(
      () => parseImageReference(bad),
      (error: unknown) =>
        error instanceof OciFetchError &&
        error.reason === OciFailureReason.InvalidReference &&
        error.code === "KNV2004" &&
        error.errorClass === "terminal" &&
        // go-containerregistry's words, as Config Sync's oci-sync reports them.
        error.message.startsWith(
          `failed to parse reference ${JSON.stringify(bad)}: could not parse reference: ${bad} (`,
        ),
      bad,
    );
  }
});
