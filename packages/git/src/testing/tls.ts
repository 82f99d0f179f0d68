import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

/** Test-only: a self-signed certificate for 127.0.0.1, made by the openssl CLI. */
export interface SelfSignedCert {
  readonly key: string;
  readonly cert: string;
}

const execFileAsync = promisify(execFile);

export async function hasOpenssl(): Promise<boolean> {
  try {
    await execFileAsync("openssl", ["version"]);
    return true;
  } catch {
    return false;
  }
}

export async function selfSignedCert(dir: string, commonName = "127.0.0.1"): Promise<SelfSignedCert> {
  const keyPath = join(dir, `${commonName}.key`);
  const certPath = join(dir, `${commonName}.crt`);
  await execFileAsync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    keyPath,
    "-out",
    certPath,
    "-days",
    "2",
    "-subj",
    `/CN=${commonName}`,
    "-addext",
    `subjectAltName=IP:${commonName}`,
  ]);
  return { key: await readFile(keyPath, "utf8"), cert: await readFile(certPath, "utf8") };
}
