import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRepoUrl } from "./repo-url.ts";

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

  void it("calls an http(s) URL that does not parse invalid instead of throwing", () => {
    assert.equal(parseRepoUrl("https://user:tok@127.0.0.1:99999/x.git").transport, "invalid");
    assert.equal(parseRepoUrl("https://user:%zz@host/x.git").transport, "invalid");
  });

  void it("leaves an http(s) URL without credentials as it is", () => {
    const parsed = parseRepoUrl("https://github.com/org/repo");
    assert.equal(parsed.url, "https://github.com/org/repo");
    assert.equal(parsed.username, undefined);
    assert.equal(parsed.password, undefined);
  });
});
