/**
 * What to use instead of a Config Sync Git auth type driftless refuses. gcenode and gcpserviceaccount
 * exchange the node's or a Workload Identity's Google credentials for an access token, githubapp signs
 * with a GitHub App key: neither is needed where a token works.
 */
export function gitAuthAlternative(auth: string): string | undefined {
  switch (auth) {
    case "gcenode":
    case "gcpserviceaccount":
      return `it needs Google Cloud's metadata server or Workload Identity, which driftless does not use; use auth "token" with spec.git.secretRef (a Secret with keys username and token, e.g. an access token for Cloud Source Repositories or Secure Source Manager), or auth "ssh"`;
    case "githubapp":
      return `use auth "token" with spec.git.secretRef (a Secret with keys username and token: a fine-grained or installation access token that can read the repository), or auth "ssh" with a deploy key`;
    default:
      return undefined;
  }
}
