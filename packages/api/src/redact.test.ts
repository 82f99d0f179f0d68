import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { redactCredentials, redactCredentialsIn, redactUrl } from "./redact.ts";

void describe("redactUrl", () => {
  void it("masks http(s) user-info whole, since a token is often written as the user", () => {
    assert.equal(redactUrl("https://ghp_abc123@github.com/org/repo"), "https://***@github.com/org/repo");
    assert.equal(redactUrl("https://user:s3cr3t@127.0.0.1:99999/x.git"), "https://***@127.0.0.1:99999/x.git");
    // An unescaped "@" in the password: user-info ends at the last "@" of the URL.
    assert.equal(redactUrl("https://user:p@ss@host/r"), "https://***@host/r");
    assert.equal(redactUrl('https://u:"t k@host/r'), "https://***@host/r");
    assert.equal(redactUrl("https://host/%zz"), "https://host/%zz");
  });

  void it("masks a password holding a character that ends user-info for a URL parser, parsed or not", () => {
    for (const password of [
      "Hunter#2secret",
      "Hunter/2secret",
      "Hunter?2secret",
      'Pa<ss>w"d',
      "back\\slash",
      "p@ss/w?rd#x",
    ]) {
      const shown = redactUrl(`https://deploy:${password}@127.0.0.1:1/x.git`);
      assert.equal(shown, "https://***@127.0.0.1:1/x.git", password);
    }
    assert.equal(redactUrl("http://proxyuser:Pr0xy#Secret@proxy.corp:3128"), "http://***@proxy.corp:3128");
    assert.equal(redactUrl("ssh://git:pa#ss@host/r"), "ssh://git@host/r");
  });

  void it("masks an '@' in the path or query with the user-info: a little of the URL lost, never a secret", () => {
    assert.equal(redactUrl("https://host/r?x=a@b"), "https://***@b");
  });

  void it("keeps the ssh user but never a password, in URL and scp-like form", () => {
    assert.equal(redactUrl("ssh://git@host/repo"), "ssh://git@host/repo");
    assert.equal(redactUrl("ssh://git:pw@host/repo"), "ssh://git@host/repo");
    assert.equal(redactUrl("git@github.com:org/repo.git"), "git@github.com:org/repo.git");
    assert.equal(redactUrl("bot:tok3n@github.com:org/repo.git"), "bot@github.com:org/repo.git");
  });

  void it("drops the password of a URL written without its scheme (user:token@host/path), as git reads it as ssh", () => {
    assert.equal(redactUrl("oauth2:glpat-s3cr3t@gitlab.com/org/repo.git"), "oauth2@gitlab.com/org/repo.git");
    assert.equal(redactUrl("x-access-token:ghp_abc@github.com"), "x-access-token@github.com");
    // scp-like host:path with an "@" in the path names no password: left whole.
    assert.equal(redactUrl("github.com:org/repo@v1/x"), "github.com:org/repo@v1/x");
    assert.equal(redactUrl("git@github.com:org/repo.git"), "git@github.com:org/repo.git");
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

  void it("masks a URL whose password ends user-info for a URL parser, in messages and JSON log lines", () => {
    const event = 'KNV1061: spec.git.repo "https://deploy:Hunter#2secret@127.0.0.1:1/x.git" is not a valid URL';
    assert.equal(redactCredentials(event), 'KNV1061: spec.git.repo "https://***@127.0.0.1:1/x.git" is not a valid URL');
    for (const password of ["Hunter/2secret", "Hunter?2secret", 'Pa<ss>w"d', "a\\b", "pa#ss/w?rd"]) {
      const line = JSON.stringify({
        msg: "x",
        repo: `https://deploy:${password}@h/r`,
        proxy: `http://u:${password}@p:3128`,
      });
      const redacted = redactCredentials(line);
      assert.deepEqual(
        JSON.parse(redacted),
        { msg: "x", repo: "https://***@h/r", proxy: "http://***@p:3128" },
        redacted,
      );
    }
    const proxyError =
      "the Secret's https_proxy key 'http://proxyuser:Pr0xy#Secret@proxy.corp:3128' is not a proxy URL";
    assert.ok(!redactCredentials(proxyError).includes("Secret@"), redactCredentials(proxyError));
  });

  void it("leaves git's words whole: no listed value under 4 characters is scrubbed as free text", () => {
    const said = "fatal: Authentication failed for 'http://127.0.0.1:45597/remote.git/'";
    assert.equal(redactCredentials(said, ["git", "pw"]), said);
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

void describe("an image reference", () => {
  void it("keeps the tag of a one-segment image pinned by digest, which has the shape of user:password@host", () => {
    const digest = `sha256:${"ab".repeat(32)}`;
    assert.equal(redactUrl(`app:v1@${digest}`), `app:v1@${digest}`);
    assert.equal(redactUrl(`127.0.0.1:5000/app:v1@${digest}`), `127.0.0.1:5000/app:v1@${digest}`);
    assert.equal(redactUrl("oauth2:glpat-abc@gitlab.com/org/repo"), "oauth2@gitlab.com/org/repo");
  });
});

void describe("credentials in a URL's query", () => {
  void it("masks the value of a parameter named for a credential, alone and inside text, and keeps the others", () => {
    assert.equal(
      redactUrl("https://git.example.com/team/repo.git?private_token=glpat-abc123&ref=main"),
      "https://git.example.com/team/repo.git?private_token=***&ref=main",
    );
    assert.equal(
      redactUrl("https://h/r?ref=main&X-Amz-Signature=f00d#top"),
      "https://h/r?ref=main&X-Amz-Signature=***#top",
    );
    assert.equal(
      redactCredentials("fatal: unable to access 'https://h/r.git?access_key=s3cr3t': 403"),
      "fatal: unable to access 'https://h/r.git?access_key=***': 403",
    );
    assert.equal(
      redactUrl("https://h/r?pass=hunter22&pwd=s3cr3t&jwt=eyJh.x.y&page=2#access_token=abc&state=s"),
      "https://h/r?pass=***&pwd=***&jwt=***&page=2#access_token=***&state=s",
    );
    const line = JSON.stringify({ msg: "fetch", repo: "https://u:p@h/r?token=t0k3n", next: "https://h/r?page=2" });
    const parsed = JSON.parse(redactCredentials(line)) as Record<string, string>;
    assert.deepEqual(parsed, { msg: "fetch", repo: "https://***@h/r?token=***", next: "https://h/r?page=2" });
  });
});
