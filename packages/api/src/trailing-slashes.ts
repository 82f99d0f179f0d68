/**
 * `text` without the slashes it ends with. A loop, not `/\/+$/`: that regex retries at every slash of a
 * run not at the end, quadratic in its length, and the strings come from specs, pushes and repositories
 * (40,000 slashes in a RepoSync's repo stalled the manager's event loop for seconds).
 */
export function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return text.slice(0, end);
}
