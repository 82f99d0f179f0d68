/**
 * Why a reconciler pod keeps failing, from what the kubelet reports on it: a container waiting in
 * CrashLoopBackOff (or unable to start: image, config), with its last exit and the tail of its log
 * (the reconciler container's terminationMessagePolicy is FallbackToLogsOnError, so a crash's last
 * error line is the termination message).
 */
import { redactCredentials } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";

interface ContainerStatus {
  readonly name?: string;
  readonly restartCount?: number;
  readonly state?: { readonly waiting?: { readonly reason?: string; readonly message?: string } };
  readonly lastState?: {
    readonly terminated?: { readonly exitCode?: number; readonly reason?: string; readonly message?: string };
  };
}

/** Waiting reasons that mean the container cannot run as it is, not that it is merely starting. */
const failingReasons = new Set([
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "RunContainerError",
]);

const maxMessageChars = 512;

export function podFailure(pod: KubeObject): string | undefined {
  const statuses = ((pod["status"] as { containerStatuses?: ContainerStatus[] } | undefined)?.containerStatuses ??
    []) as ContainerStatus[];
  for (const status of statuses) {
    const waiting = status.state?.waiting;
    if (waiting?.reason === undefined || !failingReasons.has(waiting.reason)) continue;
    const last = status.lastState?.terminated;
    const exit =
      last === undefined
        ? ""
        : `; last exit code ${last.exitCode ?? "?"}${last.reason === undefined ? "" : ` (${last.reason})`}${
            last.message === undefined || last.message.trim() === "" ? "" : `: ${lastLine(last.message)}`
          }`;
    const detail = waiting.message === undefined || waiting.message === "" ? "" : `: ${waiting.message}`;
    const restarts = status.restartCount === undefined ? "" : `, ${status.restartCount} restarts`;
    const text = `pod ${pod.metadata.name}, container ${status.name ?? "?"}: ${waiting.reason}${detail}${restarts}${exit}`;
    const clean = redactCredentials(text);
    return clean.length <= maxMessageChars ? clean : `${clean.slice(0, maxMessageChars - 1)}…`;
  }
  return undefined;
}

/** The last non-empty line of a termination message (the tail of the log: the error comes last). */
function lastLine(message: string): string {
  const lines = message.split("\n").filter((line) => line.trim() !== "");
  return (lines.at(-1) ?? "").trim();
}
