/**
 * The typed cluster client: raw HTTP over one keep-alive agent, JSON in and out, errors
 * classified. Objects go to the server exactly as given (no generated models that drop unknown
 * fields or `$patch` directives), which is what a reconciler needs.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { agentTls, createAgent } from "./agent.ts";
import {
  clientDefaults,
  type DeleteOptions,
  type DeleteResult,
  type KubeClientOptions,
  type KubeRequest,
  type ListOptions,
  type PatchType,
  type WatchOptions,
  type WriteOptions,
} from "./client-options.ts";
import { connect, loadKubeConfig, type Endpoint, type TlsMaterial } from "./connection.ts";
import {
  errorFrom,
  holdsMetadata,
  invalid,
  metadataFrom,
  networkError,
  objectFrom,
  parseJson,
  typeFill,
  type Subject,
} from "./decode-response.ts";
import { loadNativeConnection, type CredentialProvider } from "./kubeconfig.ts";
import { KubeApiError, KubeReason, isGone } from "./errors.ts";
import { jsonPatch } from "./json-patch.ts";
import { asKubeObject, asListPage } from "./parse.ts";
import { encodeQuery, resourcePath } from "./paths.ts";
import { verbForMethod, type RequestCounter, type RequestVerb } from "./request-counter.ts";
import { Sender } from "./send.ts";
import { openStreamSocket, type OpenedStream } from "./stream-socket.ts";
import type { RawResponse, Transport } from "./transport.ts";
import type { KubeObject, ListPage, ObjectList, ResourceMapping, WatchEvent } from "./types.ts";
import { readWatchEvents } from "./watch.ts";

const patchContentTypes: Readonly<Record<PatchType, string>> = {
  merge: "application/merge-patch+json",
  "strategic-merge": "application/strategic-merge-patch+json",
  json: "application/json-patch+json",
  // JSON is YAML, so the object is sent as JSON under the apply content type.
  apply: "application/apply-patch+yaml",
};

const partialMetadata = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const partialMetadataList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

export class KubeClient {
  /** The API server URL. */
  readonly server: string;
  readonly requests: RequestCounter;
  readonly #sender: Sender;
  readonly #closed = new AbortController();

  private constructor(transport: Transport, credentials: CredentialProvider, options: KubeClientOptions) {
    this.server = transport.endpoint.server;
    this.#sender = new Sender(transport, credentials, options);
    this.requests = this.#sender.counter;
  }

  /**
   * A client from a kubeconfig file; without a path, the in-cluster service account when
   * KUBERNETES_SERVICE_HOST is set, else the default loading rules ($KUBECONFIG, ~/.kube/config).
   */
  static async fromKubeconfig(path?: string, options: KubeClientOptions = {}): Promise<KubeClient> {
    const native = loadNativeConnection(path);
    if (native !== undefined) return KubeClient.#connected(native.endpoint, native.tls, native.credentials, options);
    return KubeClient.fromConfig(await loadKubeConfig(path), options);
  }

  /** A client from an already loaded client-node KubeConfig (its current context). */
  static async fromConfig(kc: KubeConfig, options: KubeClientOptions = {}): Promise<KubeClient> {
    const { endpoint, tls, credentials } = await connect(kc);
    return KubeClient.#connected(endpoint, tls, credentials, options);
  }

  static #connected(
    endpoint: Endpoint,
    tls: TlsMaterial,
    credentials: CredentialProvider,
    options: KubeClientOptions,
  ): KubeClient {
    const agentOptions = agentTls(tls);
    const agent = createAgent(endpoint, agentOptions, {
      maxSockets: options.maxSockets ?? clientDefaults.maxSockets,
      idleSocketTimeoutMs: options.idleSocketTimeoutMs ?? clientDefaults.idleSocketTimeoutMs,
    });
    return new KubeClient(
      { endpoint, agent, stream: { endpoint, tls: agentOptions, open: new Set() } },
      credentials,
      options,
    );
  }

  /** Aborted by close(): the informers on this client stop with it. */
  get closedSignal(): AbortSignal {
    return this.#closed.signal;
  }

  /** Any API request; the JSON response is returned unchecked as T (parse it before trusting it). */
  async request<T = unknown>(req: KubeRequest): Promise<T> {
    const raw = await this.requestRaw(req);
    return (raw.body.length === 0 ? undefined : JSON.parse(raw.body.toString("utf8"))) as T;
  }

  /** Any API request, answering the raw 2xx response (for non-JSON bodies such as /metrics). */
  async requestRaw(req: KubeRequest): Promise<RawResponse> {
    const watch = req.query?.["watch"] === true || req.query?.["watch"] === "true" || req.query?.["watch"] === 1;
    const verb = verbForMethod(req.method, watch);
    const path = req.path + encodeQuery(req.query);
    const subject = { operation: `${req.method.toUpperCase()} ${req.path}` };
    const raw = await this.#sender.send(
      verb,
      req.method.toUpperCase(),
      path,
      encodeBody(req.body),
      req.contentType ?? "application/json",
      req,
      subject,
    );
    if (raw.status >= 300) throw errorFrom(raw, subject);
    return raw;
  }

  /** The object, or undefined when the server answers 404. */
  async get(
    m: ResourceMapping,
    namespace: string | undefined,
    name: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<KubeObject | undefined> {
    const got = await this.#getOne(m, namespace, name, opts);
    return got === undefined ? undefined : objectFrom(got.raw, m, got.subject);
  }

  /**
   * Only the object's metadata (the server answers a PartialObjectMetadata), or undefined on 404:
   * enough to tell from its resourceVersion whether a large object changed since it was last read.
   */
  async getMetadata(
    m: ResourceMapping,
    namespace: string | undefined,
    name: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<KubeObject | undefined> {
    const got = await this.#getOne(m, namespace, name, { ...opts, accept: partialMetadata });
    if (got === undefined) return undefined;
    const { raw, subject } = got;
    if (raw.status >= 300) throw errorFrom(raw, subject);
    const partial = parseJson(raw, subject) as { metadata?: unknown } | undefined;
    // The answer's own apiVersion and kind are meta.k8s.io's; the object is of the mapping's type.
    const obj = asKubeObject({ metadata: partial?.metadata }, typeFill(m));
    if (obj === undefined) throw invalid(raw, subject, "not object metadata");
    return obj;
  }

  /** Every matching object, following `continue` tokens; resourceVersion is the list's. */
  async list(m: ResourceMapping, opts: ListOptions = {}): Promise<ObjectList> {
    const items: KubeObject[] = [];
    let resourceVersion = "";
    for await (const page of this.listPages(m, opts)) {
      if (page.restart) items.length = 0;
      for (const item of page.items) items.push(item);
      resourceVersion = page.resourceVersion;
    }
    return { items, resourceVersion };
  }

  /**
   * The list one page at a time, so a caller that stores objects as they come (an informer's cache)
   * never holds the whole parsed list: at 10,000 objects that is tens of MiB at once.
   */
  async *listPages(m: ResourceMapping, opts: ListOptions = {}): AsyncGenerator<ListPage, void, undefined> {
    const subject = describe("list", m, opts.namespace, undefined);
    const path = resourcePath(m, opts.namespace);
    const fill = typeFill(m);
    let continueToken: string | undefined;
    let pageSize = opts.pageSize ?? 500;
    let restart = false;
    for (;;) {
      const query = {
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: pageSize,
        continue: continueToken,
        resourceVersion: continueToken === undefined ? opts.resourceVersion : undefined,
      };
      const req = opts.metadataOnly === true ? { ...opts, accept: partialMetadataList } : opts;
      const raw = await this.#sender.send("list", "GET", path + encodeQuery(query), undefined, undefined, req, subject);
      if (raw.status >= 300) {
        const error = errorFrom(raw, subject);
        // The continue token outlived etcd's compaction window: read the whole list again in one
        // piece, as client-go's pager does, rather than failing a long list near its end.
        if (continueToken !== undefined && isGone(error)) {
          continueToken = undefined;
          pageSize = 0;
          restart = true;
          continue;
        }
        throw error;
      }
      const page = asListPage(parseJson(raw, subject), fill);
      if (page === undefined) throw invalid(raw, subject, "not a list");
      yield { items: page.items, resourceVersion: page.resourceVersion, restart };
      restart = false;
      if (page.continueToken === "") return;
      continueToken = page.continueToken;
    }
  }

  async create(m: ResourceMapping, obj: KubeObject, opts: WriteOptions = {}): Promise<KubeObject> {
    const namespace = requireNamespace(m, obj);
    const subject = describe("create", m, namespace, obj.metadata.name);
    const path = resourcePath(m, namespace) + writeQuery(opts);
    return this.#write("create", "POST", path, JSON.stringify(obj), "application/json", m, opts, subject);
  }

  /**
   * Writes `next` over `current` as a JSON patch, which RBAC's `patch` verb allows (as Config Sync writes,
   * so a Role granting its verbs suffices), not `update`. current's resourceVersion goes in the patch as a
   * precondition: 409 Conflict when the object changed since it was read, as a conditional PUT.
   */
  async update(
    m: ResourceMapping,
    current: KubeObject,
    next: KubeObject,
    opts: WriteOptions = {},
  ): Promise<KubeObject> {
    const resourceVersion = current.metadata.resourceVersion;
    const { resourceVersion: _ignored, ...nextMetadata } = next.metadata;
    const ops = jsonPatch(current, { ...next, metadata: { ...nextMetadata, resourceVersion } });
    if (resourceVersion !== undefined)
      ops.unshift({ op: "replace", path: "/metadata/resourceVersion", value: resourceVersion });
    const { namespace, name } = current.metadata;
    try {
      return await this.patch(m, namespace, name, ops, "json", opts);
    } catch (error) {
      // The server applies the patch before it checks the resourceVersion: over a stale copy, an op on a
      // key someone removed since fails first (422), where a stale PUT was a 409. Said as the Conflict it is.
      if (resourceVersion === undefined || !(error instanceof KubeApiError) || error.status !== 422) throw error;
      if ((await this.get(m, namespace, name))?.metadata.resourceVersion === resourceVersion) throw error;
      const subject = describe("patch", m, namespace, name);
      throw new KubeApiError({
        status: 409,
        reason: KubeReason.Conflict,
        serverMessage: `the object has been modified since resourceVersion ${resourceVersion}, and the patch made over that copy no longer applies (${error.serverMessage})`,
        operation: subject.operation,
        ...(subject.resource === undefined ? {} : { resource: subject.resource }),
        cause: error,
      });
    }
  }

  /** PUT; `metadata.resourceVersion`, when set, makes it conditional (409 Conflict if stale). */
  async replace(m: ResourceMapping, obj: KubeObject, opts: WriteOptions = {}): Promise<KubeObject> {
    const namespace = requireNamespace(m, obj);
    const subject = describe("update", m, namespace, obj.metadata.name);
    const path = resourcePath(m, namespace, obj.metadata.name) + writeQuery(opts);
    return this.#write("update", "PUT", path, JSON.stringify(obj), "application/json", m, opts, subject);
  }

  async replaceStatus(m: ResourceMapping, obj: KubeObject, opts: WriteOptions = {}): Promise<KubeObject> {
    const namespace = requireNamespace(m, obj);
    const subject = describe("update status of", m, namespace, obj.metadata.name);
    const path = resourcePath(m, namespace, obj.metadata.name, "status") + writeQuery(opts);
    return this.#write("update", "PUT", path, JSON.stringify(obj), "application/json", m, opts, subject);
  }

  /** A patch of `type`; "apply" is server-side apply and needs a fieldManager. */
  async patch(
    m: ResourceMapping,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    opts: WriteOptions & { force?: boolean; subresource?: "status" } = {},
  ): Promise<KubeObject> {
    if (type === "apply" && (opts.fieldManager === undefined || opts.fieldManager === "")) {
      throw new TypeError("server-side apply needs a fieldManager");
    }
    const subject = describe(type === "apply" ? "apply" : "patch", m, namespace, name);
    const path =
      resourcePath(m, namespace, name, opts.subresource) + writeQuery(opts, type === "apply" ? opts.force : undefined);
    const body = typeof patch === "string" ? patch : JSON.stringify(patch);
    return this.#write("patch", "PATCH", path, body, patchContentTypes[type], m, opts, subject);
  }

  /** True when the server accepted the deletion (it may finish later, with finalizers); false on 404. */
  async delete(
    m: ResourceMapping,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): Promise<boolean> {
    return (await this.deleteWithResult(m, namespace, name, opts)) !== "absent";
  }

  /** As {@link delete}, and says whether the object is gone at once or still being deleted. */
  async deleteWithResult(
    m: ResourceMapping,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): Promise<DeleteResult> {
    const subject = describe("delete", m, namespace, name);
    const body: Record<string, unknown> = { kind: "DeleteOptions", apiVersion: "v1" };
    if (opts.propagationPolicy !== undefined) body["propagationPolicy"] = opts.propagationPolicy;
    if (opts.preconditions !== undefined) body["preconditions"] = opts.preconditions;
    if (opts.gracePeriodSeconds !== undefined) body["gracePeriodSeconds"] = opts.gracePeriodSeconds;
    if (opts.dryRun === true) body["dryRun"] = ["All"];
    const raw = await this.#sender.send(
      "delete",
      "DELETE",
      resourcePath(m, namespace, name),
      JSON.stringify(body),
      "application/json",
      opts,
      subject,
    );
    if (raw.status === 404) return "absent";
    if (raw.status >= 300) throw errorFrom(raw, subject);
    return deletionAnswered(raw.body);
  }

  /**
   * Watch events from `resourceVersion` on, parsed as they arrive. The iteration ends when the
   * server closes the stream (timeoutSeconds) or `signal` aborts; a failure to connect or a
   * broken stream throws KubeApiError. A too-old resourceVersion arrives as an ERROR event with
   * code 410: relist, then watch again.
   */
  async *watch(m: ResourceMapping, opts: WatchOptions): AsyncGenerator<WatchEvent, void, undefined> {
    const subject = describe("watch", m, opts.namespace, undefined);
    const query = {
      watch: 1,
      resourceVersion: opts.resourceVersion,
      allowWatchBookmarks: opts.allowWatchBookmarks === false ? undefined : true,
      timeoutSeconds: opts.timeoutSeconds,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    };
    const path = resourcePath(m, opts.namespace) + encodeQuery(query);
    // After close() no watch opens a connection: nothing would close it.
    if (opts.signal.aborted || this.#closed.signal.aborted) return;
    const refusal = this.#sender.refusal;
    if (refusal !== undefined) throw networkError(refusal, subject);
    this.#sender.counter.started("watch");
    const started = performance.now();
    let stream: OpenedStream;
    try {
      const headers = {
        ...this.#sender.baseHeaders,
        ...(await this.#sender.credentialHeaders(
          this.#sender.credentials.headers(),
          { timeoutMs: this.#sender.timeoutMs, signal: opts.signal, callerSignal: opts.signal },
          subject,
        )),
        Accept: opts.metadataOnly === true ? partialMetadata : "application/json",
      };
      stream = await openStreamSocket(this.#sender.transport.stream, {
        path,
        headers,
        signal: opts.signal,
        timeoutMs: this.#sender.timeoutMs,
      });
    } catch (error) {
      this.#sender.counter.finished("watch", 0, performance.now() - started, path);
      if (opts.signal.aborted) return;
      throw networkError(error, subject);
    }
    const { status, headers } = stream.head;
    this.#sender.counter.finished("watch", status, performance.now() - started, path);
    try {
      if (status !== 200) throw errorFrom({ status, headers, body: await wholeBody(stream) }, subject);
      if (!opts.signal.aborted) opts.onOpen?.();
      // With no idle deadline a half-open connection would hang forever; bookmarks and the
      // server's own timeout keep a healthy watch well inside this.
      const idleMs = ((opts.timeoutSeconds ?? 1800) + 60) * 1000;
      yield* readWatchEvents(stream, typeFill(m), {
        signal: opts.signal,
        idleMs,
        operation: subject.operation,
        ...(opts.isEcho === undefined ? {} : { isEcho: opts.isEcho }),
      });
    } catch (error) {
      if (opts.signal.aborted) return;
      if (error instanceof KubeApiError) throw error;
      throw networkError(error, subject);
    } finally {
      stream.close();
    }
  }

  /**
   * Fails every request in flight at once and every later one before it is sent: a stopping process's
   * answer to an API server that holds a request unanswered (each would run to its timeout).
   */
  refuseRequests(): void {
    this.#sender.refuse(new Error("the Kubernetes client refuses requests: its process is stopping"));
  }

  /** Closes every connection; in-flight requests fail. */
  close(): void {
    this.#closed.abort(new Error("the Kubernetes client is closed"));
    this.#sender.transport.agent.destroy();
    for (const socket of this.#sender.transport.stream.open) socket.destroy();
  }

  /** One object's GET (`accept` chooses its form): the raw answer, or undefined on 404. */
  async #getOne(
    m: ResourceMapping,
    namespace: string | undefined,
    name: string,
    req: { signal?: AbortSignal; accept?: string },
  ): Promise<{ raw: RawResponse; subject: Subject } | undefined> {
    const subject = describe("get", m, namespace, name);
    const raw = await this.#sender.send(
      "get",
      "GET",
      resourcePath(m, namespace, name),
      undefined,
      undefined,
      req,
      subject,
    );
    return raw.status === 404 ? undefined : { raw, subject };
  }

  async #write(
    verb: RequestVerb,
    method: string,
    path: string,
    body: string,
    contentType: string,
    m: ResourceMapping,
    opts: { readonly signal?: AbortSignal; readonly response?: "object" | "metadata" },
    subject: Subject,
  ): Promise<KubeObject> {
    const metadataOnly = opts.response === "metadata";
    const req = metadataOnly ? { ...opts, prefixSuffices: holdsMetadata } : opts;
    const raw = await this.#sender.send(verb, method, path, body, contentType, req, subject);
    if (raw.status >= 300) throw errorFrom(raw, subject);
    return metadataOnly ? metadataFrom(raw, m, subject) : objectFrom(raw, m, subject);
  }
}

function describe(
  action: string,
  m: ResourceMapping,
  namespace: string | undefined,
  name: string | undefined,
): Subject {
  const where =
    name === undefined
      ? namespace === undefined || namespace === ""
        ? ""
        : ` in namespace ${namespace}`
      : ` ${m.namespaced && namespace !== undefined ? `${namespace}/` : ""}${name}`;
  const kind = m.group === "" ? m.kind : `${m.kind}.${m.group}`;
  const subject: Subject = { operation: `${action} ${kind}${where}` };
  if (name === undefined) return subject;
  return {
    ...subject,
    resource: { group: m.group, kind: m.kind, name, ...(m.namespaced && namespace !== undefined ? { namespace } : {}) },
  };
}

function requireNamespace(m: ResourceMapping, obj: KubeObject): string | undefined {
  const namespace = obj.metadata.namespace;
  if (m.namespaced && (namespace === undefined || namespace === "")) {
    throw new TypeError(`${m.kind} ${obj.metadata.name} is namespaced but has no metadata.namespace`);
  }
  return m.namespaced ? namespace : undefined;
}

function writeQuery(opts: WriteOptions, force?: boolean): string {
  return encodeQuery({
    fieldManager: opts.fieldManager,
    dryRun: opts.dryRun === true ? "All" : undefined,
    fieldValidation: opts.fieldValidation,
    force: force === true ? true : undefined,
  });
}

function encodeBody(body: unknown): string | Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body) || typeof body === "string") return body;
  return JSON.stringify(body);
}

/** An error answer's body, whole (it is a small Status). */
function wholeBody(stream: OpenedStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.start({
      data: (bytes) => chunks.push(Buffer.from(bytes)), // copies: the read buffer is reused
      end: () => resolve(Buffer.concat(chunks)),
      error: reject,
    });
  });
}

/**
 * The object answered with a deletionTimestamp is held (finalizers, a grace period); a Status, or the object
 * without one, is gone. An answer this cannot read is taken as held: a caller waiting for the object asks.
 */
function deletionAnswered(body: Buffer): DeleteResult {
  try {
    const answered = JSON.parse(body.toString("utf8")) as { metadata?: { deletionTimestamp?: unknown } } | null;
    const timestamp = answered?.metadata?.deletionTimestamp;
    return timestamp === undefined || timestamp === null ? "removed" : "deleting";
  } catch {
    return "deleting";
  }
}
