import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseAllDocuments } from "yaml";
import { apiRequest } from "./http.ts";

interface Connection {
  readonly server: string;
  readonly ca: string;
  readonly token: string;
}

interface CrdObject {
  readonly metadata: { readonly name: string };
}

/**
 * Installs every CRD under `dir` with server-side apply (idempotent: a second `cluster:up` or an edited
 * CRD just re-applies) and waits until each is Established, so callers can create custom resources at once.
 */
export async function installCrds(conn: Connection, dir: string, timeoutMs = 30_000): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml")).sort();
  const names: string[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), "utf8"))) {
      const crd = doc.toJS() as CrdObject | null;
      if (crd === null) continue;
      const name = crd.metadata.name;
      const res = await apiRequest({
        ...conn,
        method: "PATCH",
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}?fieldManager=driftless-local-cluster&force=true`,
        body: JSON.stringify(crd),
        contentType: "application/apply-patch+yaml",
      });
      if (res.status >= 300)
        throw new Error(`local-cluster: installing CRD ${name} from ${file} failed (${res.status}): ${res.body}`);
      names.push(name);
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    while (!(await isEstablished(conn, name))) {
      if (Date.now() > deadline) throw new Error(`local-cluster: CRD ${name} not Established after ${timeoutMs} ms`);
      await delay(100);
    }
  }
  return names;
}

async function isEstablished(conn: Connection, name: string): Promise<boolean> {
  const res = await apiRequest({
    ...conn,
    method: "GET",
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
  });
  if (res.status !== 200) return false;
  const crd = JSON.parse(res.body) as { status?: { conditions?: { type: string; status: string }[] } };
  return (crd.status?.conditions ?? []).some((c) => c.type === "Established" && c.status === "True");
}
