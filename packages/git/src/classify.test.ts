import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classifyGitStderr, isCacheCorruption, summarizeStderr } from "./classify.ts";
import { defaultErrorClass, GitFailureReason } from "./errors.ts";

/** Real stderr from git 2.39, OpenSSH 9 and hosting services, as git prints it with LC_ALL=C. */
const samples: [string, GitFailureReason][] = [
  ["fatal: Authentication failed for 'https://github.com/org/private.git/'", GitFailureReason.AuthRejected],
  [
    "remote: HTTP Basic: Access denied\nfatal: Authentication failed for 'https://gitlab.com/x.git/'",
    GitFailureReason.AuthRejected,
  ],
  ["fatal: unable to access 'https://host/r/': The requested URL returned error: 403", GitFailureReason.AuthRejected],
  ["fatal: could not read Username for 'https://host': terminal prompts disabled", GitFailureReason.AuthRejected],
  [
    "git@host: Permission denied (publickey).\nfatal: Could not read from remote repository.",
    GitFailureReason.AuthRejected,
  ],
  ['Load key "/tmp/k/id": invalid format\ngit@host: Permission denied (publickey).', GitFailureReason.AuthRejected],
  ["Host key verification failed.\nfatal: Could not read from remote repository.", GitFailureReason.HostKeyRejected],
  [
    "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.",
    GitFailureReason.HostKeyRejected,
  ],
  [
    "fatal: unable to access 'https://h/r/': SSL certificate problem: self-signed certificate",
    GitFailureReason.TlsRejected,
  ],
  [
    "fatal: unable to access 'https://h/r/': server certificate verification failed. CAfile: none CRLfile: none",
    GitFailureReason.TlsRejected,
  ],
  [
    "remote: Repository not found.\nfatal: repository 'https://github.com/org/nope.git/' not found",
    GitFailureReason.RepoNotFound,
  ],
  ["fatal: '/srv/nope.git' does not appear to be a git repository", GitFailureReason.RepoNotFound],
  ["fatal: couldn't find remote ref refs/heads/gone", GitFailureReason.RefNotFound],
  [
    "fatal: remote error: upload-pack: not our ref 0123456789abcdef0123456789abcdef01234567",
    GitFailureReason.RevisionNotFound,
  ],
  ["error: Server does not allow request for unadvertised object 0123456789abcdef", GitFailureReason.RevisionNotFound],
  [
    "fatal: unable to access 'https://nohost.invalid/r/': Could not resolve host: nohost.invalid",
    GitFailureReason.Unavailable,
  ],
  ["ssh: connect to host 10.0.0.1 port 22: Connection timed out", GitFailureReason.Unavailable],
  [
    "fatal: unable to access 'http://127.0.0.1:1/r/': Failed to connect to 127.0.0.1 port 1: Connection refused",
    GitFailureReason.Unavailable,
  ],
  ["fatal: unable to access 'https://h/r/': The requested URL returned error: 502", GitFailureReason.Unavailable],
  ["error: RPC failed; curl 56 GnuTLS recv error (-9)\nfatal: early EOF", GitFailureReason.Unavailable],
  ["fatal: transport 'file' not allowed", GitFailureReason.InvalidSpec],
  [
    "error: object baa49241426dc08a84dfbe21ae45b867a23555b4: duplicateEntries: contains duplicate file entries\nfatal: fsck error in packed object\nfatal: index-pack failed",
    GitFailureReason.UnsafeContent,
  ],
  ["fatal: something nobody has seen before", GitFailureReason.Unknown],
];

void describe("classifyGitStderr", () => {
  for (const [stderr, reason] of samples) {
    void it(`classifies "${stderr.split("\n")[0] ?? ""}" as ${reason}`, () => {
      assert.equal(classifyGitStderr(stderr), reason);
    });
  }

  void it("makes credentials, host keys, TLS and missing things terminal and network trouble retryable", () => {
    assert.equal(defaultErrorClass(GitFailureReason.AuthRejected), "terminal");
    assert.equal(defaultErrorClass(GitFailureReason.RefNotFound), "terminal");
    assert.equal(defaultErrorClass(GitFailureReason.TlsRejected), "terminal");
    assert.equal(defaultErrorClass(GitFailureReason.UnsafeContent), "terminal");
    assert.equal(defaultErrorClass(GitFailureReason.Unavailable), "retry");
    assert.equal(defaultErrorClass(GitFailureReason.Timeout), "retry");
  });
});

void describe("summarizeStderr", () => {
  void it("keeps the lines that matter and drops hints and noise", () => {
    const stderr =
      "hint: Using 'master' as the name\nCloning into bare repository...\nremote: Repository not found.\nfatal: repository 'x' not found\n";
    assert.equal(summarizeStderr(stderr), "remote: Repository not found.; fatal: repository 'x' not found");
  });

  void it("caps the length", () => {
    assert.equal(summarizeStderr(`fatal: ${"x".repeat(2000)}`, 100).length, 100);
  });
});

void describe("isCacheCorruption", () => {
  void it("recognises a damaged local repository but not remote failures", () => {
    assert.ok(isCacheCorruption("error: object file objects/ab/cdef is empty\nfatal: loose object abcdef is corrupt"));
    assert.ok(isCacheCorruption("fatal: did not send all necessary objects"));
    assert.ok(!isCacheCorruption("fatal: Authentication failed for 'https://h/r'"));
  });

  void it("recognises a lock a killed git left, which no other process of ours holds, and classifies it as nothing remote", () => {
    const shallowLock =
      "fatal: Unable to create '/cache/s/repo.git/shallow.lock': File exists.\n\nAnother git process seems to be running in this repository, e.g.\nan editor opened by 'git commit'. Please make sure all processes\nare terminated then try again. If it still fails, a git process\nmay have crashed in this repository earlier:\nremove the file manually to continue.\n";
    const refLock =
      "error: cannot lock ref 'refs/driftless/target': Unable to create '/cache/s/repo.git/refs/driftless/target.lock': File exists.\n";
    for (const stderr of [shallowLock, refLock]) {
      assert.ok(isCacheCorruption(stderr), stderr);
      assert.equal(classifyGitStderr(stderr), GitFailureReason.Unknown, stderr);
    }
  });
});
