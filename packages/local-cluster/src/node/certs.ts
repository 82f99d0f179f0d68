import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { mustRun } from "./command.ts";

/** The node's TLS material: the kubelet's serving certificate and the apiserver's client certificate for it. */
export interface NodeCerts {
  /** Signs both; the kubelet trusts client certificates it signed, the apiserver verifies the kubelet with it. */
  readonly caFile: string;
  readonly kubeletCertFile: string;
  readonly kubeletKeyFile: string;
  readonly apiserverClientCertFile: string;
  readonly apiserverClientKeyFile: string;
  /**
   * The apiserver's serving certificate when it has a node: its self-signed one names only the
   * advertised address, and clients on this machine still use 127.0.0.1.
   */
  readonly apiserverCertFile: string;
  readonly apiserverKeyFile: string;
}

/**
 * Makes a CA and three certificates with openssl: the kubelet's serving certificate for the node's
 * address and name, the apiserver's serving certificate, and a client certificate in system:masters
 * that the apiserver presents to the kubelet for logs, exec and port-forward.
 */
export async function makeNodeCerts(
  dir: string,
  nodeName: string,
  nodeAddress: string,
  kubernetesServiceIp: string,
): Promise<NodeCerts> {
  await mkdir(dir, { recursive: true });
  const path = (name: string): string => join(dir, name);
  const certs: NodeCerts = {
    caFile: path("node-ca.crt"),
    kubeletCertFile: path("kubelet.crt"),
    kubeletKeyFile: path("kubelet.key"),
    apiserverClientCertFile: path("apiserver-kubelet-client.crt"),
    apiserverClientKeyFile: path("apiserver-kubelet-client.key"),
    apiserverCertFile: path("apiserver.crt"),
    apiserverKeyFile: path("apiserver.key"),
  };
  const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await mustRun("openssl", [
    "req",
    "-x509",
    ...ecKey,
    "-keyout",
    path("node-ca.key"),
    "-out",
    certs.caFile,
    "-days",
    "3650",
    "-subj",
    "/CN=driftless-node-ca",
  ]);
  await sign(dir, "kubelet", `/O=system:nodes/CN=system:node:${nodeName}`, [
    `subjectAltName=IP:${nodeAddress},DNS:${nodeName}`,
    "extendedKeyUsage=serverAuth",
    "keyUsage=critical,digitalSignature,keyEncipherment",
  ]);
  const apiserverNames = [
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
    "localhost",
  ];
  await sign(dir, "apiserver", "/CN=kube-apiserver", [
    `subjectAltName=${[...["127.0.0.1", nodeAddress, kubernetesServiceIp].map((ip) => `IP:${ip}`), ...apiserverNames.map((n) => `DNS:${n}`)].join(",")}`,
    "extendedKeyUsage=serverAuth",
    "keyUsage=critical,digitalSignature,keyEncipherment",
  ]);
  await sign(dir, "apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", [
    "extendedKeyUsage=clientAuth",
    "keyUsage=critical,digitalSignature,keyEncipherment",
  ]);
  return certs;

  async function sign(folder: string, name: string, subject: string, extensions: readonly string[]): Promise<void> {
    const extFile = join(folder, `${name}.ext`);
    await writeFile(extFile, extensions.join("\n") + "\n");
    await mustRun("openssl", [
      "req",
      ...ecKey,
      "-keyout",
      join(folder, `${name}.key`),
      "-out",
      join(folder, `${name}.csr`),
      "-subj",
      subject,
    ]);
    await mustRun("openssl", [
      "x509",
      "-req",
      "-in",
      join(folder, `${name}.csr`),
      "-CA",
      certs.caFile,
      "-CAkey",
      join(folder, "node-ca.key"),
      "-CAcreateserial",
      "-days",
      "3650",
      "-extfile",
      extFile,
      "-out",
      join(folder, `${name}.crt`),
    ]);
  }
}
