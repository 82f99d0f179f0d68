import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lsRemotePatterns, parseLsRemote, pickRemoteCommit } from "./ls-remote.ts";

const a = "a".repeat(40);
const b = "b".repeat(40);
const c = "c".repeat(40);

void describe("ls-remote", () => {
  void it("asks for peeled tags too", () => {
    assert.deepEqual(lsRemotePatterns({ kind: "ref", name: "v1", candidates: ["refs/tags/v1", "refs/heads/v1"] }), [
      "refs/tags/v1",
      "refs/tags/v1^{}",
      "refs/heads/v1",
      "refs/heads/v1^{}",
    ]);
  });

  void it("asks for a branch's peeled line too, so a branch naming an annotated tag gives its commit", () => {
    const target = { kind: "branch", candidates: ["refs/tags/v1"] } as const;
    assert.deepEqual(lsRemotePatterns(target), ["refs/tags/v1", "refs/tags/v1^{}"]);
    const refs = parseLsRemote(`${a}\trefs/tags/v1\n${b}\trefs/tags/v1^{}\n`);
    assert.equal(pickRemoteCommit(refs, target)?.commit, b);
  });

  void it("takes an annotated tag's commit, not the tag object", () => {
    const refs = parseLsRemote(`${a}\trefs/tags/v1\n${b}\trefs/tags/v1^{}\n`);
    assert.deepEqual(
      pickRemoteCommit(refs, { kind: "ref", name: "v1", candidates: ["refs/tags/v1", "refs/heads/v1"] }),
      {
        commit: b,
        ref: "refs/tags/v1",
      },
    );
  });

  void it("prefers a tag over a branch of the same name, and matches names exactly, not by suffix", () => {
    const refs = parseLsRemote(`${a}\trefs/heads/x/refs/heads/main\n${b}\trefs/heads/v1\n${c}\trefs/tags/v1\n`);
    assert.equal(pickRemoteCommit(refs, { kind: "branch", candidates: ["refs/heads/main"] }), undefined);
    assert.equal(
      pickRemoteCommit(refs, { kind: "ref", name: "v1", candidates: ["refs/tags/v1", "refs/heads/v1"] })?.commit,
      c,
    );
  });
});
