/** How a failed helm command is classified, for a spec.helm source and for the charts a kustomization pulls alike. */
import { ErrorClass } from "@driftless/api";

/** helm's messages for what passes by itself: everything else needs a change to the spec, Secret or repository. */
const transient =
  /connection refused|connection reset|no such host|network is unreachable|no route to host|i\/o timeout|timeout awaiting|Client\.Timeout exceeded|context deadline exceeded|TLS handshake timeout|unexpected EOF|500 Internal Server Error|502 Bad Gateway|503 Service Unavailable|504 Gateway Timeout|408 Request Timeout|429 Too Many Requests/i;

/** Network failures and a server's 5xx, 408 or 429 retry, as git's do; anything else helm printed is terminal. */
export function helmFailureClass(output: string): ErrorClass {
  return transient.test(output) ? ErrorClass.Retry : ErrorClass.Terminal;
}
