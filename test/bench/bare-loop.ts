/**
 * The reconciler benchmark's reference: a bare client loop creating N ConfigMaps at a concurrency,
 * run as its own process (reconciler.bench.ts starts it), so that it starts as cold as a reconciler
 * does at its first big apply: no JIT-compiled write path, no open connections. Prints one JSON line:
 * the wall-clock window of the loop, for the parent to read CPU and rate from.
 *
 * Usage: node bare-loop.ts KUBECONFIG NAMESPACE COUNT CONCURRENCY managed|plain [REPO_URL]
 */
import { decorate, gitContextValue, mapLimit, setToken } from "@driftless/applier";
import { configMapMapping, KubeClient, type KubeObject } from "@driftless/kube";
import { Annotator } from "@driftless/objectmatcher";
import { benchConfigMap } from "./config-map.ts";

const [kubeconfig, namespace, countText, concurrencyText, kind, repoUrl] = process.argv.slice(2);
if (kubeconfig === undefined || namespace === undefined || kind === undefined)
  throw new Error("usage: bare-loop.ts KUBECONFIG NAMESPACE COUNT CONCURRENCY managed|plain");
const count = Number(countText);
const concurrency = Number(concurrencyText);

// `managed` writes exactly what the reconciler writes (management annotations and the last-applied
// record), so the ratio isolates the reconciler's own overhead from the API server's cost of bigger objects.
const annotator = new Annotator();
// The reconciler's bodies carry its source (source-path from the repository root, git-context): so do these.
const source =
  repoUrl === undefined
    ? undefined
    : { dir: "config", gitContext: gitContextValue({ repo: repoUrl, branch: "main", rev: "HEAD" }) };
const bodies = Array.from({ length: count }, (_, i) => {
  const plain = benchConfigMap(`cm-${i}`, namespace, `v${i}`);
  if (kind !== "managed") return plain;
  const id = { group: "", kind: "ConfigMap", namespace, name: `cm-${i}` };
  const body = decorate(
    {
      id,
      apiVersion: "v1",
      object: plain,
      sourcePath: `cm-${i}.yaml`,
      sourceHash: "",
      dependsOn: [],
      ...(source === undefined ? {} : { source }),
    },
    { kind: "RepoSync", namespace, name: "repo-sync" },
  );
  setToken(body, "0123456789abcdef0123456789abcdef01234567");
  annotator.setLastAppliedAnnotation(body);
  return body as KubeObject;
});

const client = await KubeClient.fromKubeconfig(kubeconfig, { maxSockets: concurrency });
const startedAt = Date.now();
await mapLimit(bodies, concurrency, (body) => client.create(configMapMapping, body));
const finishedAt = Date.now();
client.close();
process.stdout.write(JSON.stringify({ startedAt, finishedAt }) + "\n");
