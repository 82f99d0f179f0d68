import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { baseGitEnv } from "./git-env.ts";

void describe("baseGitEnv", () => {
  void it("hands git none of the reconciler's own credentials, only what git and ssh use", () => {
    const env = baseGitEnv(
      {
        PATH: "/usr/bin",
        HOME: "/home/r",
        https_proxy: "http://proxy:3128",
        NO_PROXY: "10.0.0.0/8",
        SSL_CERT_FILE: "/etc/ssl/ca.pem",
        REDIS_URL: "redis://redis:6379",
        REDIS_USERNAME: "ns-reconciler-team-a",
        REDIS_PASSWORD: "redis-pw",
        RECONCILER_REDIS_URL: "redis://redis:6379",
        KUBECONFIG: "/etc/kube/config",
        DRIFTLESS_RENDER_SOCKET: "/run/render.sock",
        DRIFTLESS_GIT_PASSWORD: "inherited",
        WEBHOOK_SECRET_FILE: "/etc/webhook/secret",
        GITHUB_TOKEN: "ghp_x",
        db_password: "x",
        GIT_DIR: "/elsewhere",
      },
      ["https"],
      { DRIFTLESS_GIT_PASSWORD: "this-fetch's-token" },
    );
    for (const key of [
      "REDIS_URL",
      "REDIS_USERNAME",
      "REDIS_PASSWORD",
      "RECONCILER_REDIS_URL",
      "KUBECONFIG",
      "DRIFTLESS_RENDER_SOCKET",
      "WEBHOOK_SECRET_FILE",
      "GITHUB_TOKEN",
      "db_password",
      "GIT_DIR",
    ]) {
      assert.equal(env[key], undefined, key);
    }
    assert.equal(env.PATH, "/usr/bin");
    assert.equal(env.HOME, "/home/r");
    assert.equal(env.https_proxy, "http://proxy:3128");
    assert.equal(env.NO_PROXY, "10.0.0.0/8");
    assert.equal(env.SSL_CERT_FILE, "/etc/ssl/ca.pem");
    // What the fetch itself gives git (its own token, for the credential helper) still reaches it.
    assert.equal(env.DRIFTLESS_GIT_PASSWORD, "this-fetch's-token");
  });
});
