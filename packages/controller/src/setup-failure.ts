/**
 * A reconciler setup that failed, as the sync's status says it (reconcile-sync.ts). Config Sync's
 * reconciler-manager reports a failed upsert as Stalled=True, with the refused object's kind as the reason
 * (ServiceAccount, RoleBinding, Deployment) and the error as the message, and retries; so does driftless,
 * with the error's KNV code in the condition's `errors`.
 */
import { ErrorClass, type DriftlessError } from "@driftless/api";

/** The step of the setup that failed, from the kind of object the API server refused. */
export function setupFailureReason(error: DriftlessError): string {
  const kind = error.resources[0]?.kind;
  switch (kind) {
    case "ServiceAccount":
    case "Deployment":
    case "Secret":
    case "Role":
    case "RoleBinding":
    case "ClusterRole":
    case "ClusterRoleBinding":
      return kind;
    default:
      return "Error";
  }
}

/** A transient error goes on status only once it has failed this many attempts in a row (a conflict is no stall). */
export const TransientAttemptsBeforeReport = 3;

/** The attempt of the manager job that failed (its queue retries `retry`-class errors). */
export interface JobAttempt {
  readonly attempt: number;
  readonly maxAttempts: number;
}

/**
 * Whether a failed setup is written on the sync's status now: always when retrying cannot fix it
 * (`terminal`, `stalled`: a refused object, a missing namespace, no permission); a transient one
 * (`retry`: a conflict, a timeout, a 5xx) once it has kept failing, or on the job's last attempt.
 */
export function reportsSetupFailure(error: DriftlessError, attempt: JobAttempt | undefined): boolean {
  if (error.errorClass !== ErrorClass.Retry || attempt === undefined) return true;
  return attempt.attempt >= TransientAttemptsBeforeReport || attempt.attempt >= attempt.maxAttempts;
}
