import { readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { parseAllDocuments } from "yaml";
import { apiRequest } from "./http.ts";

interface Connection {
  readonly server: string;
  readonly ca: string;
  readonly token: string;
}

interface PolicyObject {
  readonly kind: string;
  readonly metadata: { readonly name: string };
}

const basePath = "/apis/admissionregistration.k8s.io/v1";
const plurals: Readonly<Record<string, string>> = {
  ValidatingAdmissionPolicy: "validatingadmissionpolicies",
  ValidatingAdmissionPolicyBinding: "validatingadmissionpolicybindings",
};

interface PolicyStatus {
  readonly metadata: { readonly generation?: number };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly typeChecking?: { readonly expressionWarnings?: readonly { fieldRef: string; warning: string }[] };
  };
}

/**
 * Installs the ValidatingAdmissionPolicies (and their bindings) of `file` with server-side apply, as
 * manifests/ ships them, and waits until the API server has type-checked each policy. A type-checking
 * warning fails the install: an expression that names a field wrongly would refuse every write it matches.
 */
export async function installAdmissionPolicies(conn: Connection, file: string, timeoutMs = 30_000): Promise<string[]> {
  const policies: string[] = [];
  for (const doc of parseAllDocuments(await readFile(file, "utf8"))) {
    const obj = doc.toJS() as PolicyObject | null;
    if (obj === null) continue;
    const plural = plurals[obj.kind];
    if (plural === undefined)
      throw new Error(`local-cluster: ${file} holds a ${obj.kind}; only admission policies are installed from it`);
    const res = await apiRequest({
      ...conn,
      method: "PATCH",
      path: `${basePath}/${plural}/${obj.metadata.name}?fieldManager=driftless-local-cluster&force=true`,
      body: JSON.stringify(obj),
      contentType: "application/apply-patch+yaml",
    });
    if (res.status >= 300)
      throw new Error(
        `local-cluster: installing ${obj.kind} ${obj.metadata.name} from ${file} failed (${res.status}): ${res.body}`,
      );
    if (obj.kind === "ValidatingAdmissionPolicy") policies.push(obj.metadata.name);
  }
  const deadline = Date.now() + timeoutMs;
  for (const name of policies) {
    for (;;) {
      const res = await apiRequest({
        ...conn,
        method: "GET",
        path: `${basePath}/${plurals["ValidatingAdmissionPolicy"]}/${name}`,
      });
      const policy = res.status === 200 ? (JSON.parse(res.body) as PolicyStatus) : undefined;
      if (policy !== undefined && policy.status?.observedGeneration === policy.metadata.generation) {
        const warnings = policy.status?.typeChecking?.expressionWarnings ?? [];
        if (warnings.length > 0)
          throw new Error(
            `local-cluster: admission policy ${name} from ${file} does not type-check: ${warnings.map((w) => `${w.fieldRef}: ${w.warning}`).join("; ")}`,
          );
        break;
      }
      if (Date.now() > deadline)
        throw new Error(`local-cluster: admission policy ${name} not type-checked after ${timeoutMs} ms`);
      await delay(100);
    }
  }
  return policies;
}
