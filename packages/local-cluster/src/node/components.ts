import { writeFile } from "node:fs/promises";
import { stringify } from "yaml";
import { nodeContainerdSocket } from "../paths.ts";
import type { NodeCerts } from "./certs.ts";
import { nodeNetwork } from "./network.ts";

/**
 * The kubelet's configuration for this machine: cgroup v1 with the cgroupfs driver (there is no
 * systemd), swap tolerated, containerd over CRI, serving only on the bridge address, and
 * authenticating callers by client certificate (the apiserver) or token review.
 */
export async function writeKubeletConfig(file: string, certs: NodeCerts, resolvConf: string): Promise<void> {
  const config = {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${nodeContainerdSocket}`,
    address: nodeNetwork.bridgeAddress,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: 0,
    tlsCertFile: certs.kubeletCertFile,
    tlsPrivateKeyFile: certs.kubeletKeyFile,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: certs.caFile },
    },
    authorization: { mode: "Webhook" },
    clusterDomain: "cluster.local",
    resolvConf,
    // Images are imported, never pulled: collecting one would lose it for good.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
    serializeImagePulls: false,
    maxPods: 110,
  };
  await writeFile(file, stringify(config));
}

/** kube-proxy in iptables mode, leaving the host's conntrack and localhost settings as they are. */
export async function writeKubeProxyConfig(file: string, kubeconfig: string): Promise<void> {
  const config = {
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: "iptables",
    clientConnection: { kubeconfig },
    hostnameOverride: nodeNetwork.nodeName,
    clusterCIDR: nodeNetwork.podCidr,
    healthzBindAddress: "127.0.0.1:10256",
    metricsBindAddress: "127.0.0.1:10249",
    nodePortAddresses: [`${nodeNetwork.bridgeAddress}/32`],
    // Zero means "leave the sysctl alone": this VM's conntrack table is not kube-proxy's to size.
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: "0s",
      tcpCloseWaitTimeout: "0s",
    },
    iptables: { localhostNodePorts: false },
  };
  await writeFile(file, stringify(config));
}
