import { execFile, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { access, mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * Test-only: a real OpenSSH server on a loopback port, with a throw-away host key and an
 * authorized_keys file of our choosing, logging in as the current user (whose login shell then
 * runs git-upload-pack, as on any git-over-ssh host).
 */
const execFileAsync = promisify(execFile);
export const sshdPath = "/usr/sbin/sshd";

export interface SshKeyPair {
  readonly privateKey: string;
  readonly publicKey: string;
}

export interface TestSshd {
  readonly port: number;
  readonly user: string;
  /** The server's host key, as a known_hosts line for [127.0.0.1]:port. */
  readonly knownHostsLine: string;
  url(path: string): string;
  close(): Promise<void>;
}

export async function hasSshd(): Promise<boolean> {
  try {
    await access(sshdPath);
    return true;
  } catch {
    return false;
  }
}

export async function generateKey(dir: string, name: string): Promise<SshKeyPair> {
  const path = join(dir, name);
  await execFileAsync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path]);
  return { privateKey: await readFile(path, "utf8"), publicKey: await readFile(`${path}.pub`, "utf8") };
}

export async function startSshd(dir: string, authorizedKeys: readonly string[]): Promise<TestSshd> {
  // As root, sshd insists on its privilege-separation directory, which the Debian service
  // normally creates at start; a non-root sshd runs without privilege separation.
  if (process.getuid?.() === 0) await mkdir("/run/sshd", { recursive: true, mode: 0o755 });
  const hostKey = join(dir, "ssh_host_ed25519_key");
  await execFileAsync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey]);
  const authorizedKeysPath = join(dir, "authorized_keys");
  await writeFile(authorizedKeysPath, authorizedKeys.join(""), { mode: 0o600 });
  const port = await freePort();
  const config = join(dir, "sshd_config");
  await writeFile(
    config,
    [
      `ListenAddress 127.0.0.1`,
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${authorizedKeysPath}`,
      // The temp directory is not root-owned 0755 all the way up, which StrictModes demands.
      "StrictModes no",
      "UsePAM no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PermitRootLogin prohibit-password",
      "PidFile none",
      "",
    ].join("\n"),
  );
  const child = spawn(sshdPath, ["-D", "-e", "-f", config, "-p", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  await waitForListening(child, port);
  const hostPublicKey = (await readFile(`${hostKey}.pub`, "utf8")).split(" ").slice(0, 2).join(" ");
  const user = userInfo().username;
  return {
    port,
    user,
    knownHostsLine: `[127.0.0.1]:${String(port)} ${hostPublicKey}\n`,
    url: (path) => `ssh://${user}@127.0.0.1:${String(port)}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Resolves when sshd says it listens (its own readiness signal), rejects if it exits first. */
function waitForListening(child: ChildProcess, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      if (output.includes(`Server listening on 127.0.0.1 port ${String(port)}`)) {
        child.stderr?.off("data", onData);
        child.stderr?.resume();
        resolve();
      }
    };
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`sshd exited with ${String(code)} before listening: ${output}`)));
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
