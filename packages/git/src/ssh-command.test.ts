import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { shellQuote, sshCommand } from "./ssh-command.ts";

void describe("sshCommand", () => {
  void it("checks host keys strictly against the given known_hosts only, with only the given key", () => {
    const command = sshCommand({ keyPath: "/tmp/a/id", knownHostsPath: "/tmp/a/known_hosts" });
    assert.equal(
      command,
      "ssh -F /dev/null -i /tmp/a/id -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes " +
        "-o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -o GlobalKnownHostsFile=/dev/null " +
        "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=/tmp/a/known_hosts -o ConnectTimeout=30 -o LogLevel=ERROR",
    );
  });

  void it("turns host key checking off without known_hosts, as Config Sync does, and records no host", () => {
    const command = sshCommand({ keyPath: "/k" });
    assert.match(command, /-o StrictHostKeyChecking=no -o UserKnownHostsFile=\/dev\/null/);
    assert.doesNotMatch(command, /StrictHostKeyChecking=yes/);
  });

  void it("quotes paths so the shell git runs it through cannot be injected", () => {
    const command = sshCommand({ keyPath: "/tmp/it's here/$(touch x)/id" });
    assert.ok(command.includes(`'/tmp/it'\\''s here/$(touch x)/id'`));
    assert.equal(shellQuote("plain/path-1.2"), "plain/path-1.2");
  });
});
