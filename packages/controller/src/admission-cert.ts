/**
 * The admission webhook's TLS material, made by the manager itself: a self-signed CA and a serving
 * certificate it signs (ECDSA P-256), as PEM. Node can read certificates but not write them, so the
 * few DER structures X.509 needs are encoded here; the API server is the real check (it must accept
 * the serving certificate against the caBundle), and X509Certificate reads them back in the tests.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from "node:crypto";
import type { KeyObject } from "node:crypto";
import { isIP } from "node:net";

export interface WebhookCertificates {
  /** The CA the API server trusts (the caBundle). */
  readonly caCert: string;
  /** The serving certificate and its key. */
  readonly tlsCert: string;
  readonly tlsKey: string;
}

export interface IssueOptions {
  /** DNS names and IP addresses the API server may use to reach the webhook. */
  readonly hosts: readonly string[];
  readonly lifetimeMs: number;
  readonly now?: Date;
}

/** A fresh CA and a serving certificate for `hosts`, both valid from a minute ago for `lifetimeMs`. */
export function issueWebhookCertificates(options: IssueOptions): WebhookCertificates {
  const now = options.now ?? new Date();
  // A minute of slack for clocks a little behind the manager's.
  const notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now.getTime() + options.lifetimeMs);
  const ca = generateKeyPairSync("ec", { namedCurve: "P-256" });
  // A name of its own per CA: while a renewal keeps the previous CA in the bundle, a verifier that
  // looks the issuer up by name must not find the wrong one first.
  const caName = name(`driftless-admission-ca-${randomBytes(4).toString("hex")}`, "driftless");
  const caSpki = ca.publicKey.export({ type: "spki", format: "der" });
  const caKeyId = keyIdentifier(caSpki);
  const caDer = certificate(ca.privateKey, {
    issuer: caName,
    subject: caName,
    spki: caSpki,
    notBefore,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, seq(bool(true))),
      extension(OID.keyUsage, true, bitString(Buffer.from([0x86]), 1)), // digitalSignature, keyCertSign, cRLSign
      extension(OID.subjectKeyIdentifier, false, octets(caKeyId)),
    ],
  });
  const leaf = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const leafSpki = leaf.publicKey.export({ type: "spki", format: "der" });
  const leafDer = certificate(ca.privateKey, {
    issuer: caName,
    subject: name(options.hosts[0] ?? "driftless-admission-webhook", "driftless"),
    spki: leafSpki,
    notBefore,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, seq()),
      extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)), // digitalSignature
      extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
      extension(OID.subjectAltName, false, seq(...options.hosts.map(generalName))),
      extension(OID.subjectKeyIdentifier, false, octets(keyIdentifier(leafSpki))),
      extension(OID.authorityKeyIdentifier, false, seq(tlv(0x80, caKeyId))),
    ],
  });
  return {
    caCert: pem("CERTIFICATE", caDer),
    tlsCert: pem("CERTIFICATE", leafDer),
    tlsKey: leaf.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** Why `certs` must be replaced (unreadable, not for these hosts, past `renewAt`), or undefined when they serve. */
export function renewalReason(
  certs: Partial<WebhookCertificates>,
  hosts: readonly string[],
  renewBeforeMs: number,
  now: Date = new Date(),
): string | undefined {
  if (certs.caCert === undefined || certs.tlsCert === undefined || certs.tlsKey === undefined) return "missing";
  let ca: X509Certificate;
  let leaf: X509Certificate;
  try {
    ca = new X509Certificate(certs.caCert);
    leaf = new X509Certificate(certs.tlsCert);
    if (!leaf.checkPrivateKey(createPrivateKey(certs.tlsKey))) return "the key does not match the certificate";
  } catch (error) {
    return `unreadable: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (!leaf.verify(ca.publicKey)) return "not signed by the CA";
  for (const host of hosts) {
    const matches = isIP(host) === 0 ? leaf.checkHost(host, { wildcards: false }) : leaf.checkIP(host);
    if (matches === undefined) return `not valid for ${host}`;
  }
  const expires = Math.min(Date.parse(ca.validTo), Date.parse(leaf.validTo));
  if (expires - now.getTime() < renewBeforeMs) return `expires ${new Date(expires).toISOString()}`;
  return undefined;
}

/** The expiry of a PEM certificate (the earliest, for a bundle's first), as a Date. */
export function expiryOf(certPem: string): Date {
  return new Date(new X509Certificate(certPem).validTo);
}

/** The certificates of a PEM bundle that have not expired at `now`, each a PEM block ending in a newline. */
export function unexpiredCertificates(bundle: string, now: Date = new Date()): string[] {
  const blocks = bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks
    .filter((block) => {
      try {
        return Date.parse(new X509Certificate(block).validTo) > now.getTime();
      } catch {
        return false;
      }
    })
    .map((block) => `${block}\n`);
}

// ---- the DER that X.509 needs (ITU-T X.690), nothing more ----

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  subjectKeyIdentifier: "2.5.29.14",
  authorityKeyIdentifier: "2.5.29.35",
  serverAuth: "1.3.6.1.5.5.7.3.1",
} as const;

interface TbsFields {
  readonly issuer: Buffer;
  readonly subject: Buffer;
  readonly spki: Buffer;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly extensions: readonly Buffer[];
}

function certificate(signer: KeyObject, f: TbsFields): Buffer {
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const serial = randomBytes(16);
  // Positive, and its first byte not zero: DER integers are minimal, and strict parsers refuse a leading 0x00.
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40;
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))), // v3
    integer(serial),
    algorithm,
    f.issuer,
    seq(time(f.notBefore), time(f.notAfter)),
    f.subject,
    f.spki,
    tlv(0xa3, seq(...f.extensions)),
  );
  return seq(tbs, algorithm, bitString(sign("sha256", tbs, signer), 0));
}

function name(commonName: string, organization: string): Buffer {
  return seq(
    tlv(0x31, seq(oid(OID.organization), utf8(organization))),
    tlv(0x31, seq(oid(OID.commonName), utf8(commonName.slice(0, 64)))),
  );
}

function generalName(host: string): Buffer {
  const family = isIP(host);
  if (family === 4) return tlv(0x87, Buffer.from(host.split(".").map(Number)));
  if (family === 6) return tlv(0x87, ipv6Bytes(host));
  return tlv(0x82, Buffer.from(host, "ascii"));
}

function ipv6Bytes(address: string): Buffer {
  const [head = "", tail = ""] = address.split("::");
  const parts = (s: string): string[] => (s === "" ? [] : s.split(":"));
  const groups = address.includes("::")
    ? [...parts(head), ...Array<string>(8 - parts(head).length - parts(tail).length).fill("0"), ...parts(tail)]
    : parts(address);
  const bytes = Buffer.alloc(16);
  groups.forEach((g, i) => bytes.writeUInt16BE(parseInt(g, 16), i * 2));
  return bytes;
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

function keyIdentifier(spki: Buffer): Buffer {
  // RFC 5280 4.2.1.2 method 1 hashes the key's bits; any stable digest of the key serves as an identifier.
  return createHash("sha1").update(spki).digest();
}

function time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, "");
  const year = date.getUTCFullYear();
  // RFC 5280: UTCTime through 2049, GeneralizedTime from 2050.
  return year < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}

function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  let header: number[];
  if (length < 0x80) header = [tag, length];
  else {
    const bytes: number[] = [];
    for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
    header = [tag, 0x80 | bytes.length, ...bytes];
  }
  return Buffer.concat([Buffer.from(header), content]);
}

function seq(...items: readonly Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function integer(bytes: Buffer): Buffer {
  return tlv(0x02, bytes);
}

function bool(value: boolean): Buffer {
  return tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
}

function octets(bytes: Buffer): Buffer {
  return tlv(0x04, bytes);
}

function utf8(text: string): Buffer {
  return tlv(0x0c, Buffer.from(text, "utf8"));
}

function bitString(bytes: Buffer, unusedBits: number): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), bytes]));
}

function oid(dotted: string): Buffer {
  const arcs = dotted.split(".").map(Number);
  const [first = 0, second = 0, ...rest] = arcs;
  const out: number[] = [first * 40 + second];
  for (const arc of rest) {
    const chunk: number[] = [];
    for (let n = arc; ; n = Math.floor(n / 128)) {
      chunk.unshift((n & 0x7f) | (chunk.length === 0 ? 0 : 0x80));
      if (n < 128) break;
    }
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
