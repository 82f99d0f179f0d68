import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { redactCredentials, redactCredentialsIn, redactUrl } from "./redact.ts";

void describe("redactUrl", () => {
  void it("masks http(s) user-info whole, since a token is often written as the user", () => {
    assert.equal(redactUrl("https://ghp_abc123@github.com/org/repo"), "https://***@github.com/org/repo");
    assert.equal(redactUrl("https://user:s3cr3t@127.0.0.1:99999/x.git"), "https://***@127.0.0.1:99999/x.git");
    // An unescaped "@" in the password: user-info ends at the last "@" before the path.
    assert.equal(redactUrl("https://user:p@ss@host/r?x=a@b"), "https://***@host/r?x=a@b");
    assert.equal(redactUrl('https://u:"t k@host/r'), "https://***@host/r");
    assert.equal(redactUrl("https://host/%zz"), "https://host/%zz");
  });

  void it("keeps the ssh user but never a password, in URL and scp-like form", () => {
    assert.equal(redactUrl("ssh://git@host/repo"), "ssh://git@host/repo");
    assert.equal(redactUrl("ssh://git:pw@host/repo"), "ssh://git@host/repo");
    assert.equal(redactUrl("git@github.com:org/repo.git"), "git@github.com:org/repo.git");
    assert.equal(redactUrl("bot:tok3n@github.com:org/repo.git"), "bot@github.com:org/repo.git");
  });
});

void describe("redactCredentials", () => {
  void it("masks every URL's user-info and every listed secret in free text", () => {
    const text = "fatal: unable to access 'https://bot:tok123@host/r/': error 403 (tok123); see http://a@b/c";
    assert.equal(
      redactCredentials(text, ["tok123"]),
      "fatal: unable to access 'https://***@host/r/': error 403 (***); see http://***@b/c",
    );
  });

  void it("keeps a JSON log line valid", () => {
    const line = JSON.stringify({ msg: "x", repo: 'https://u:"t\\@k@host/r', other: "mail me@example.com" });
    const parsed = JSON.parse(redactCredentials(line)) as Record<string, string>;
    assert.ok(!JSON.stringify(parsed).includes("k@host"), JSON.stringify(parsed));
    assert.equal(parsed["other"], "mail me@example.com");
  });
});

void describe("redactCredentialsIn", () => {
  void it("redacts every string of a JSON value and leaves the rest as it is", () => {
    const status = {
      source: { gitStatus: { repo: "https://u:tok@h/r" }, errors: [{ errorMessage: "of https://tok@h/r: refused" }] },
      observedGeneration: 3,
      synced: true,
    };
    assert.deepEqual(redactCredentialsIn(status), {
      source: { gitStatus: { repo: "https://***@h/r" }, errors: [{ errorMessage: "of https://***@h/r: refused" }] },
      observedGeneration: 3,
      synced: true,
    });
  });
});
