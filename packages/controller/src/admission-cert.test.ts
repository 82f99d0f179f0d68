import { test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { issueWebhookCertificates, renewalReason, unexpiredCertificates } from "./admission-cert.ts";

const day = 24 * 60 * 60 * 1000;

test("the serving certificate is signed by the CA, for the hosts asked, for the lifetime asked", () => {
  const hosts = ["127.0.0.1", "reconciler-manager.config-management-system.svc", "::1"];
  const now = new Date("2030-01-01T00:00:00Z");
  const certs = issueWebhookCertificates({ hosts, lifetimeMs: 365 * day, now });
  const ca = new X509Certificate(certs.caCert);
  const leaf = new X509Certificate(certs.tlsCert);
  assert.equal(ca.ca, true);
  assert.equal(leaf.ca, false);
  assert.equal(leaf.verify(ca.publicKey), true);
  assert.equal(leaf.checkIP("127.0.0.1"), "127.0.0.1");
  assert.equal(leaf.checkIP("::1"), "::1");
  assert.equal(
    leaf.checkHost("reconciler-manager.config-management-system.svc"),
    "reconciler-manager.config-management-system.svc",
  );
  assert.equal(leaf.checkIP("10.0.0.1"), undefined);
  assert.equal(Date.parse(leaf.validTo), now.getTime() + 365 * day);
  assert.deepEqual(leaf.keyUsage, ["1.3.6.1.5.5.7.3.1"]);
  // Past 2049 X.509 switches to GeneralizedTime.
  const late = issueWebhookCertificates({ hosts, lifetimeMs: 365 * day, now: new Date("2049-12-01T00:00:00Z") });
  assert.equal(new X509Certificate(late.tlsCert).validTo, "Dec  1 00:00:00 2050 GMT");
});

test("certificates are renewed when missing, foreign, for other hosts, or within the renewal window", () => {
  const now = new Date("2030-01-01T00:00:00Z");
  const certs = issueWebhookCertificates({ hosts: ["127.0.0.1"], lifetimeMs: 365 * day, now });
  assert.equal(renewalReason(certs, ["127.0.0.1"], 90 * day, now), undefined);
  assert.equal(renewalReason({}, ["127.0.0.1"], 90 * day, now), "missing");
  assert.equal(renewalReason(certs, ["10.0.0.1"], 90 * day, now), "not valid for 10.0.0.1");
  assert.match(renewalReason(certs, ["127.0.0.1"], 90 * day, new Date(now.getTime() + 300 * day)) ?? "", /^expires /);
  const other = issueWebhookCertificates({ hosts: ["127.0.0.1"], lifetimeMs: 365 * day, now });
  assert.equal(renewalReason({ ...certs, caCert: other.caCert }, ["127.0.0.1"], 0, now), "not signed by the CA");
  assert.equal(
    renewalReason({ ...certs, tlsKey: other.tlsKey }, ["127.0.0.1"], 0, now),
    "the key does not match the certificate",
  );
  assert.deepEqual(unexpiredCertificates(certs.caCert + other.caCert, new Date(now.getTime() + 400 * day)), []);
  assert.equal(unexpiredCertificates(certs.caCert + other.caCert, now).length, 2);
});
