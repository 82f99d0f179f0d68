import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRepoUrl, redactText, redactUrl } from "./repo-url.ts";

void describe("parseRepoUrl", () => {
  void it("recognises each transport by its URL form", () => {
    const cases: [string, string][] = [
      ["https://github.com/org/repo.git", "https"],
      ["HTTP://host/repo", "http"],
      ["ssh://git@host:2222/org/repo.git", "ssh"],
      ["git@github.com:org/repo.git", "ssh"],
      ["host.example:repo.git", "ssh"],
      ["git://host/repo.git", "git"],
      ["file:///srv/repo.git", "file"],
      ["/srv/repo.git", "file"],
      ["./repo", "file"],
      ["ext::sh -c evil", "unsupported"],
      ["fd::17", "unsupported"],
      ["gopher://host/repo", "unsupported"],
    ];
    for (const [url, transport] of cases) assert.equal(parseRepoUrl(url).transport, transport, url);
  });

  void it("lifts user and password out of an http(s) URL and scopes them to its origin", () => {
    const parsed = parseRepoUrl("https://bot:s%40cret@git.example.com:8443/org/repo.git");
    assert.equal(parsed.url, "https://git.example.com:8443/org/repo.git");
    assert.equal(parsed.origin, "https://git.example.com:8443");
    assert.equal(parsed.username, "bot");
    assert.equal(parsed.password, "s@cret");
  });

  void it("leaves an http(s) URL without credentials as it is", () => {
    const parsed = parseRepoUrl("https://github.com/org/repo");
    assert.equal(parsed.url, "https://github.com/org/repo");
    assert.equal(parsed.username, undefined);
    assert.equal(parsed.password, undefined);
  });
});

void describe("redactUrl", () => {
  void it("hides http(s) user-info entirely, since a token is often written as the user", () => {
    assert.equal(redactUrl("https://ghp_abc123@github.com/org/repo"), "https://***@github.com/org/repo");
    assert.equal(redactUrl("https://user:pw@host/repo"), "https://***@host/repo");
  });

  void it("keeps the ssh user, which the user needs to debug key problems, but never a password", () => {
    assert.equal(redactUrl("ssh://git@host/repo"), "ssh://git@host/repo");
    assert.equal(redactUrl("ssh://git:pw@host/repo"), "ssh://git@host/repo");
    assert.equal(redactUrl("git@github.com:org/repo.git"), "git@github.com:org/repo.git");
  });
});

void describe("redactText", () => {
  void it("removes URL user-info and every listed secret from free text", () => {
    const text = "fatal: unable to access 'https://bot:tok123@host/r/': The requested URL returned error: 403 (tok123)";
    const redacted = redactText(text, ["tok123"]);
    assert.ok(!redacted.includes("tok123"));
    assert.match(redacted, /https:\/\/\*\*\*@host\/r\//);
  });
});
