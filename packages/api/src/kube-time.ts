/**
 * Kubernetes serialises metav1.Time as RFC 3339 with whole seconds ("2024-05-01T10:00:00Z").
 * Writing milliseconds would make every status write differ from what the server echoes back,
 * so a no-op update would look like a change.
 */
export function kubeTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}
