import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { gitContextValue } from "./declaring-source.ts";

void describe("gitContextValue", () => {
  void it("writes Config Sync's git-context in Go's encoding: repo, branch, rev; <, > and & escaped", () => {
    assert.equal(
      gitContextValue({ repo: "https://git.example/a<b>&c.git", branch: "main", rev: "HEAD" }),
      '{"repo":"https://git.example/a\\u003cb\\u003e\\u0026c.git","branch":"main","rev":"HEAD"}',
    );
  });

  void it("masks the credentials of the repository URL whatever the password holds: every managed object carries it", () => {
    for (const password of ['Pa<ss>w"d', "back\\slash", "Hunter#2secret", "pa#ss/w?rd", "p@ss"]) {
      const value = gitContextValue({ repo: `http://deploy:${password}@127.0.0.1:8080/x.git`, branch: "main" });
      assert.deepEqual(JSON.parse(value), { repo: "http://***@127.0.0.1:8080/x.git", branch: "main" }, value);
    }
  });
});
