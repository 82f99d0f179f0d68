/**
 * Push notifications from GitHub, GitLab, an OCI registry (the distribution registry's notification
 * envelope), or anything able to sign a small JSON document: how each proves it knows the shared
 * secret, and what it says was pushed. Payloads are untrusted input, parsed once here into a `Push`.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { maxSourceUrlLength } from "./repo-url.ts";

export const WebhookProvider = {
  GitHub: "github",
  GitLab: "gitlab",
  /** The distribution registry's notifications: it cannot sign, so it sends `Authorization: Bearer <secret>`. */
  Registry: "registry",
  Generic: "generic",
} as const;
export type WebhookProvider = (typeof WebhookProvider)[keyof typeof WebhookProvider];

/** Header of the generic payload: `sha256=<hex HMAC-SHA256 of the body>`, like GitHub's. */
export const GenericSignatureHeader = "x-driftless-signature";

export interface Push {
  /** Every URL the repository is known by (clone, SSH, web); for an image, `host/repository`. */
  readonly repoUrls: readonly string[];
  /** The pushed branch; for a Git tag push or an image, the pushed tag. */
  readonly branch: string;
  /** The new commit; for an image, the manifest digest. */
  readonly commit: string | undefined;
  /** Set for a Git tag push (`refs/tags/<branch>`): the syncs to match follow that tag. */
  readonly tag?: true;
  /** Set for a registry push: the syncs to match are OCI ones. */
  readonly image?: true;
}

/** The media type of the distribution registry's notification envelope. */
export const RegistryEventsMediaType = "application/vnd.docker.distribution.events.v1+json";

type Headers = Readonly<Record<string, string | string[] | undefined>>;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Which provider sent the request, from the event headers each one sets. */
export function providerOf(headers: Headers): WebhookProvider {
  if (header(headers, "x-github-event") !== undefined) return WebhookProvider.GitHub;
  if (header(headers, "x-gitlab-event") !== undefined) return WebhookProvider.GitLab;
  if (header(headers, "content-type")?.startsWith(RegistryEventsMediaType) === true) return WebhookProvider.Registry;
  return WebhookProvider.Generic;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function hmacMatches(signature: string | undefined, body: Buffer, secret: string): boolean {
  if (signature === undefined || !signature.startsWith("sha256=")) return false;
  const expected = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  return safeEqual(signature.toLowerCase(), expected);
}

/**
 * True when the request proves knowledge of the secret: GitHub and the generic form sign the
 * body (HMAC-SHA256), GitLab sends the secret token itself. An empty secret verifies nothing.
 */
export function verify(provider: WebhookProvider, headers: Headers, body: Buffer, secret: string): boolean {
  if (secret === "") return false;
  switch (provider) {
    case WebhookProvider.GitHub:
      return hmacMatches(header(headers, "x-hub-signature-256"), body, secret);
    case WebhookProvider.GitLab: {
      const token = header(headers, "x-gitlab-token");
      return token !== undefined && safeEqual(token, secret);
    }
    case WebhookProvider.Registry: {
      const authorization = header(headers, "authorization");
      return authorization !== undefined && safeEqual(authorization, `Bearer ${secret}`);
    }
    case WebhookProvider.Generic:
      return hmacMatches(header(headers, GenericSignatureHeader), body, secret);
  }
}

/** What a verified request asks for: a push to act on, something to acknowledge and ignore, or garbage. */
export type WebhookRequest =
  | { readonly kind: "push"; readonly push: Push }
  | { readonly kind: "ignored"; readonly why: string }
  | { readonly kind: "invalid"; readonly why: string };

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The URLs among `keys`; one longer than any sync may name (the CRDs' maxLength) cannot match and is dropped. */
function urls(record: unknown, keys: readonly string[]): string[] {
  if (!isRecord(record)) return [];
  return keys.flatMap((k) => {
    const v = record[k];
    return isUrl(v) ? [v] : [];
  });
}

function isUrl(value: unknown): value is string {
  return typeof value === "string" && value !== "" && value.length <= maxSourceUrlLength;
}

const zeroSha = /^0+$/;

/** The branch or tag a pushed ref names; undefined for any other ref (a note, a merge request's head). */
function pushedRef(ref: unknown): { readonly name: string; readonly tag: boolean } | undefined {
  if (typeof ref !== "string") return undefined;
  for (const [prefix, tag] of [
    ["refs/heads/", false],
    ["refs/tags/", true],
  ] as const) {
    if (ref.startsWith(prefix) && ref.length > prefix.length) return { name: ref.slice(prefix.length), tag };
  }
  return undefined;
}

export function parseWebhook(provider: WebhookProvider, headers: Headers, body: Buffer): WebhookRequest {
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString("utf8"));
  } catch {
    return { kind: "invalid", why: "the body is not JSON" };
  }
  if (!isRecord(payload)) return { kind: "invalid", why: "the body is not a JSON object" };
  switch (provider) {
    case WebhookProvider.GitHub: {
      const event = header(headers, "x-github-event");
      if (event !== "push") return { kind: "ignored", why: `GitHub event ${event ?? "?"}` };
      return pushOf(
        payload["ref"],
        payload["after"],
        urls(payload["repository"], ["clone_url", "ssh_url", "git_url", "html_url", "url"]),
      );
    }
    case WebhookProvider.GitLab: {
      const event = header(headers, "x-gitlab-event");
      const pushKind = event === "Push Hook" ? "push" : event === "Tag Push Hook" ? "tag_push" : undefined;
      if (pushKind === undefined || payload["object_kind"] !== pushKind)
        return { kind: "ignored", why: `GitLab event ${event ?? "?"}` };
      const repoUrls = [
        ...urls(payload["project"], ["git_http_url", "git_ssh_url", "http_url", "ssh_url", "web_url"]),
        ...urls(payload["repository"], ["git_http_url", "git_ssh_url", "url", "homepage"]),
      ];
      return pushOf(payload["ref"], payload["checkout_sha"] ?? payload["after"], repoUrls);
    }
    case WebhookProvider.Registry:
      return registryPush(payload["events"]);
    case WebhookProvider.Generic: {
      const repo = payload["repo"];
      const branch = payload["branch"];
      const commit = payload["commit"];
      if (typeof repo !== "string" || repo === "" || typeof branch !== "string" || branch === "") {
        return { kind: "invalid", why: 'the generic payload needs "repo" and "branch" strings' };
      }
      if (!isUrl(repo)) return { kind: "invalid", why: `"repo" is over ${maxSourceUrlLength} characters` };
      return {
        kind: "push",
        push: { repoUrls: [repo], branch, commit: typeof commit === "string" && commit !== "" ? commit : undefined },
      };
    }
  }
}

function pushOf(ref: unknown, after: unknown, repoUrls: readonly string[]): WebhookRequest {
  const pushed = pushedRef(ref);
  if (pushed === undefined) return { kind: "ignored", why: `not a branch or tag push (ref ${String(ref)})` };
  if (repoUrls.length === 0) return { kind: "invalid", why: "the push names no repository URL" };
  const what = `${pushed.tag ? "tag" : "branch"} ${pushed.name}`;
  // A deleted branch or tag has nothing to fetch; the next poll reports it as a fetch error.
  if (typeof after === "string" && zeroSha.test(after)) return { kind: "ignored", why: `${what} was deleted` };
  const commit = typeof after === "string" && after !== "" ? after : undefined;
  return { kind: "push", push: { repoUrls, branch: pushed.name, commit, ...(pushed.tag ? { tag: true } : {}) } };
}

/**
 * The first manifest pushed by tag in a registry envelope (its pull events and blob pushes are ignored).
 * The registry names itself by the Host its client used, which is how syncs name it in spec.oci.image.
 */
function registryPush(events: unknown): WebhookRequest {
  if (!Array.isArray(events)) return { kind: "invalid", why: 'the registry envelope has no "events" list' };
  for (const event of events) {
    if (!isRecord(event) || event["action"] !== "push" || !isRecord(event["target"])) continue;
    const { repository, tag, digest } = event["target"];
    const host = isRecord(event["request"]) ? event["request"]["host"] : undefined;
    if (typeof repository !== "string" || typeof tag !== "string" || tag === "" || typeof host !== "string") continue;
    if (!isUrl(`${host}/${repository}`)) continue;
    return {
      kind: "push",
      push: {
        repoUrls: [`${host}/${repository}`],
        branch: tag,
        commit: typeof digest === "string" ? digest : undefined,
        image: true,
      },
    };
  }
  return { kind: "ignored", why: "no manifest pushed by tag in the registry's events" };
}
