/**
 * Admission protection (Config Sync's optional webhook), run by the manager when turned on: the
 * certificate in a Secret of config-management-system (created, and renewed before it expires, by
 * whichever replica sees it first: writes carry a resourceVersion, so replicas converge on one), the
 * HTTPS endpoint, and the ValidatingWebhookConfiguration pointing the API server at it. Every
 * replica serves, as with push webhooks. The configuration can never block the cluster:
 * `failurePolicy: Ignore`, a 3 s timeout, and only objects carrying the managed-by label (in any
 * namespace, as Config Sync's). Turned off, the manager deletes the configuration.
 */
import { createHash } from "node:crypto";
import { RootSyncNamespace } from "@driftless/api";
import { isAlreadyExists, isConflict, isNotFound, KubeClient, type KubeObject } from "@driftless/kube";
import type { ResourceMapping } from "@driftless/kube";
import type { Logger } from "@driftless/sync";
import { issueWebhookCertificates, renewalReason, unexpiredCertificates } from "./admission-cert.ts";
import { ManagedObjectLabel } from "./admission-review.ts";
import { AdmissionWebhookPath, serveAdmission, type AdmissionServer } from "./admission-server.ts";

/** Config Sync's name for its webhook configuration, so habits and scripts find it. */
export const AdmissionWebhookName = "admission-webhook.configsync.gke.io";
/** The Secret holding the CA bundle and the serving certificate. */
export const AdmissionCertSecret = "driftless-admission-webhook-cert";
/** On the configuration the manager owns; one without it is never changed or deleted. */
const ownerLabel = { "app.kubernetes.io/managed-by": "reconciler-manager" } as const;

/** A digest of the webhooks as last written (endpoint, CA bundle, selectors). */
const specHashAnnotation = "driftless.dev/webhook-spec-hash";

const userAgent = "driftless-manager/0.1.0";
const day = 24 * 60 * 60 * 1000;

export const AdmissionResource = {
  ValidatingWebhookConfiguration: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    resource: "validatingwebhookconfigurations",
    namespaced: false,
    verbs: ["get", "create", "update", "delete"],
  },
  Namespace: {
    group: "",
    version: "v1",
    kind: "Namespace",
    resource: "namespaces",
    namespaced: false,
    verbs: ["get"],
  },
  Secret: {
    group: "",
    version: "v1",
    kind: "Secret",
    resource: "secrets",
    namespaced: true,
    verbs: ["get", "create", "update"],
  },
} as const satisfies Record<string, ResourceMapping>;

/** How the API server reaches the webhook: a URL (local mode), or a Service of the cluster. */
export type AdmissionEndpoint =
  | { readonly url: string }
  | { readonly service: { readonly namespace: string; readonly name: string; readonly port: number } };

export interface AdmissionWebhookOptions {
  /** The manager's kubeconfig: the webhook has a client of its own, unfenced, since every replica serves. */
  readonly kubeconfig: string | undefined;
  /** The port the HTTPS endpoint listens on (0: any free one). */
  readonly port: number;
  readonly host?: string;
  /** The endpoint for the port listened on (a URL may name it). */
  readonly endpoint: (port: number) => AdmissionEndpoint;
  readonly log: Logger;
  /** Lifetime of a new certificate (default 1 year); it is renewed `renewBeforeMs` (90 days) before it ends. */
  readonly certLifetimeMs?: number;
  readonly renewBeforeMs?: number;
  /** How often the Secret and the configuration are checked (default 5 minutes). */
  readonly checkIntervalMs?: number;
}

interface Certificates {
  readonly caBundle: string;
  readonly cert: string;
  readonly key: string;
}

export class AdmissionWebhook {
  readonly #o: AdmissionWebhookOptions;
  readonly #client: KubeClient;
  readonly #hosts: readonly string[];
  #server: AdmissionServer | undefined;
  #serving: Certificates | undefined;
  #timer: NodeJS.Timeout | undefined;

  private constructor(options: AdmissionWebhookOptions, client: KubeClient) {
    this.#o = options;
    this.#client = client;
    // The host never depends on the port, so the certificate can be made before listening.
    this.#hosts = hostsOf(options.endpoint(0));
  }

  /** Gets or issues the certificate, starts serving, and writes the configuration. */
  static async start(options: AdmissionWebhookOptions): Promise<AdmissionWebhook> {
    const client = await KubeClient.fromKubeconfig(options.kubeconfig, { userAgent, timeoutMs: 5_000 });
    const webhook = new AdmissionWebhook(options, client);
    const certs = await webhook.#ensureCertificates();
    webhook.#serving = certs;
    webhook.#server = await serveAdmission({
      port: options.port,
      ...(options.host === undefined ? {} : { host: options.host }),
      tls: { cert: certs.cert, key: certs.key },
      lookups: { namespaceTerminating: (namespace) => webhook.#namespaceTerminating(namespace) },
      log: options.log,
    });
    await webhook.#ensureConfiguration(certs.caBundle);
    webhook.#timer = setInterval(() => void webhook.#check(), options.checkIntervalMs ?? 5 * 60_000);
    webhook.#timer.unref();
    options.log.info("admission webhook serving", { port: webhook.port, name: AdmissionWebhookName });
    return webhook;
  }

  get port(): number {
    return this.#server?.port ?? 0;
  }

  /** Stops serving; the configuration stays (shutdown is not turning it off), and failurePolicy Ignore applies meanwhile. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#server?.close();
    this.#client.close();
  }

  /** Within the API server's 3 s for the whole call; unknown counts as not terminating (the refusal stands). */
  async #namespaceTerminating(namespace: string): Promise<boolean> {
    try {
      const ns = await this.#client.get(AdmissionResource.Namespace, undefined, namespace, {
        signal: AbortSignal.timeout(2_000),
      });
      return (ns?.["status"] as { phase?: string } | undefined)?.phase === "Terminating";
    } catch {
      return false;
    }
  }

  async #check(): Promise<void> {
    try {
      const certs = await this.#ensureCertificates();
      if (certs.cert !== this.#serving?.cert) {
        this.#server?.setCertificate({ cert: certs.cert, key: certs.key });
        this.#serving = certs;
        this.#o.log.info("admission webhook certificate renewed");
      }
      await this.#ensureConfiguration(certs.caBundle);
    } catch (error) {
      this.#o.log.warn("admission webhook check failed; retried at the next one", { error: String(error) });
    }
  }

  /** The Secret's certificate when it still serves, else a new one written with a resourceVersion precondition. */
  async #ensureCertificates(): Promise<Certificates> {
    const { log } = this.#o;
    const client = this.#client;
    for (let attempt = 0; ; attempt++) {
      const secret = await client.get(AdmissionResource.Secret, RootSyncNamespace, AdmissionCertSecret);
      const current = certificatesOf(secret);
      const why = renewalReason(
        { caCert: unexpiredCertificates(current.caBundle ?? "")[0], tlsCert: current.cert, tlsKey: current.key },
        this.#hosts,
        this.#o.renewBeforeMs ?? 90 * day,
      );
      if (why === undefined) return current as Certificates;
      if (attempt >= 3) throw new Error(`could not write the admission webhook certificate: ${why}`);
      const issued = issueWebhookCertificates({ hosts: this.#hosts, lifetimeMs: this.#o.certLifetimeMs ?? 365 * day });
      // Previous CAs stay trusted until they expire (a replica may still serve a certificate one signed),
      // the two newest only: renewals come a year apart, so two cover any replica that has not caught up.
      const caBundle = [issued.caCert, ...unexpiredCertificates(current.caBundle ?? "").slice(0, 2)].join("");
      const data = {
        "ca.crt": Buffer.from(caBundle).toString("base64"),
        "tls.crt": Buffer.from(issued.tlsCert).toString("base64"),
        "tls.key": Buffer.from(issued.tlsKey).toString("base64"),
      };
      try {
        if (secret === undefined) {
          await client.create(AdmissionResource.Secret, {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: AdmissionCertSecret, namespace: RootSyncNamespace, labels: { ...ownerLabel } },
            type: "kubernetes.io/tls",
            data,
          });
        } else {
          await client.replace(AdmissionResource.Secret, { ...secret, data });
        }
        log.info("admission webhook certificate issued", { reason: why, hosts: this.#hosts });
      } catch (error) {
        // Another replica wrote it first: use theirs.
        if (!isAlreadyExists(error) && !isConflict(error)) throw error;
      }
    }
  }

  async #ensureConfiguration(caBundle: string): Promise<void> {
    const { log } = this.#o;
    const client = this.#client;
    const mapping = AdmissionResource.ValidatingWebhookConfiguration;
    const desired = webhookConfiguration(this.#o.endpoint(this.port), caBundle);
    const live = await client.get(mapping, undefined, AdmissionWebhookName);
    if (live === undefined) {
      try {
        await client.create(mapping, desired);
        log.info("admission webhook configuration created", { name: AdmissionWebhookName });
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
      return;
    }
    if (!isOurs(live)) {
      log.error(
        "a ValidatingWebhookConfiguration of this name exists and is not the manager's (Config Sync's own?); admission protection stays off until it is removed",
        { name: AdmissionWebhookName },
      );
      return;
    }
    // The API server fills in defaults, so the live webhooks never equal the desired ones: compare what was written.
    if (live.metadata.annotations?.[specHashAnnotation] === desired.metadata.annotations?.[specHashAnnotation]) return;
    try {
      await client.replace(mapping, {
        ...desired,
        metadata: { ...desired.metadata, resourceVersion: live.metadata.resourceVersion },
      });
      log.info("admission webhook configuration updated", { name: AdmissionWebhookName });
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
}

/** Turned off: the configuration goes (only the manager's own), so the API server stops calling. */
export async function removeAdmissionWebhook(kubeconfig: string | undefined, log: Logger): Promise<void> {
  const client = await KubeClient.fromKubeconfig(kubeconfig, { userAgent, timeoutMs: 5_000 });
  try {
    const mapping = AdmissionResource.ValidatingWebhookConfiguration;
    const live = await client.get(mapping, undefined, AdmissionWebhookName);
    if (live === undefined || !isOurs(live)) return;
    await client.delete(mapping, undefined, AdmissionWebhookName);
    log.info("admission webhook turned off: configuration deleted", { name: AdmissionWebhookName });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  } finally {
    client.close();
  }
}

function isOurs(obj: KubeObject): boolean {
  return Object.entries(ownerLabel).every(([k, v]) => obj.metadata.labels?.[k] === v);
}

function certificatesOf(secret: KubeObject | undefined): Partial<Certificates> {
  const data = (secret?.["data"] ?? {}) as Record<string, string | undefined>;
  const decode = (key: string): string | undefined => {
    const value = data[key];
    return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
  };
  return { caBundle: decode("ca.crt"), cert: decode("tls.crt"), key: decode("tls.key") };
}

function hostsOf(endpoint: AdmissionEndpoint): string[] {
  if ("url" in endpoint) {
    const host = new URL(endpoint.url).hostname;
    return [host.startsWith("[") ? host.slice(1, -1) : host];
  }
  const { name, namespace } = endpoint.service;
  return [`${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`];
}

/** The whole configuration, as the manager keeps it. */
export function webhookConfiguration(endpoint: AdmissionEndpoint, caBundle: string): KubeObject {
  const clientConfig = {
    ...("url" in endpoint ? { url: endpoint.url } : { service: { ...endpoint.service, path: AdmissionWebhookPath } }),
    caBundle: Buffer.from(caBundle).toString("base64"),
  };
  const webhooks = [
    {
      name: AdmissionWebhookName,
      admissionReviewVersions: ["v1"],
      clientConfig,
      rules: [
        {
          apiGroups: ["*"],
          apiVersions: ["*"],
          // Not `*/*`: subresources carry no full object to judge.
          resources: ["*"],
          operations: ["CREATE", "UPDATE", "DELETE"],
          scope: "*",
        },
      ],
      failurePolicy: "Ignore",
      matchPolicy: "Equivalent",
      sideEffects: "None",
      timeoutSeconds: 3,
      // Every namespace, as Config Sync's: the label is what selects, and the policy fails open.
      objectSelector: { matchLabels: { [ManagedObjectLabel.key]: ManagedObjectLabel.value } },
    },
  ];
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: {
      name: AdmissionWebhookName,
      labels: { ...ownerLabel },
      annotations: { [specHashAnnotation]: createHash("sha256").update(JSON.stringify(webhooks)).digest("hex") },
    },
    webhooks,
  };
}
