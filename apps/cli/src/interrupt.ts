/**
 * Ctrl-C for the commands that handle SIGINT themselves (status, sync, suspend, resume): main.ts turns it
 * into an abort, and a command interrupted before it has anything to report exits 130 at once, as a
 * shell reports a process SIGINT ended (128 + 2), however the API server behaves meanwhile.
 */
import { isForbidden, isUnauthorized } from "@driftless/kube";

export const interruptedExitCode = 130;

/** Resolves when `signal` aborts; never without one. */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal === undefined) return;
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/**
 * `promise`, unless `signal` aborts first: then it rejects with the signal's reason at once, whatever the
 * promise does (a request the client cannot cancel, a credential plugin, a retry's sleep).
 */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error as Error);
      },
    );
  });
}

/** The API server's answer that this user may not read (or is not who the kubeconfig says): retrying will not help. */
export function isRefusal(error: unknown): error is Error {
  return isForbidden(error) || isUnauthorized(error);
}
