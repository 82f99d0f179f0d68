import type { Transport } from "./repo-url.ts";

/**
 * The environment every git process runs in.
 *
 * Nothing from the host's git setup may change what is fetched or leak credentials into it: no
 * system or user config (a credential.helper=store there would write tokens to disk), no GIT_DIR
 * or GIT_INDEX_FILE inherited from whoever started the reconciler, no ssh-agent, no prompts (a
 * prompt with no terminal hangs until the timeout). Messages are forced to English because
 * classify.ts reads them. The reconciler's own credentials stay out too (reconcilerSecret).
 */
export function baseGitEnv(
  inherited: NodeJS.ProcessEnv,
  allowedTransports: readonly Transport[],
  extra: Readonly<Record<string, string>> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(inherited)) {
    if (value === undefined || dropped(key)) continue;
    env[key] = value;
  }
  return {
    ...env,
    LC_ALL: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    // Also applies to redirects and submodule URLs, which a malicious server could choose.
    GIT_ALLOW_PROTOCOL: allowedTransports.join(":"),
    ...extra,
  };
}

// The reconciler's own credentials and capabilities (its Redis user, kubeconfig, render socket, tokens):
// git, ssh and credential helpers need none of them, and anything a hostile repository gets to run must find none.
const reconcilerSecret = /^(REDIS_|RECONCILER_REDIS_|DRIFTLESS_|KUBECONFIG$)|PASSWORD|PASSWD|TOKEN|SECRET/i;

function dropped(key: string): boolean {
  return (
    key.startsWith("GIT_") ||
    reconcilerSecret.test(key) ||
    key === "SSH_ASKPASS" ||
    key === "SSH_AUTH_SOCK" ||
    key === "LANG" ||
    key === "LANGUAGE" ||
    key.startsWith("LC_")
  );
}

// Commit and tag header flaws (a malformed date or email) that old or imported history carries: harmless to a
// checkout, so a repository that has them is still fetched. The tree and .gitmodules checks stay errors.
const cosmeticFsckIds = [
  "badDate",
  "badDateOverflow",
  "badEmail",
  "badName",
  "badTimezone",
  "missingEmail",
  "missingNameBeforeEmail",
  "missingSpaceBeforeDate",
  "missingSpaceBeforeEmail",
  "multipleAuthors",
  "zeroPaddedDate",
] as const;

/**
 * Config every git process gets, against a hostile server or repository: fetched objects are fsck'd (a tree
 * listing a name twice, `..` or `.git` paths, a malicious .gitmodules are refused before they reach the cache),
 * and hooks never run, so a file that ever lands in a hooks directory is not executed with our environment.
 */
export const safetyConfig: readonly (readonly [string, string])[] = [
  ["transfer.fsckObjects", "true"],
  ["fetch.fsckObjects", "true"],
  ...cosmeticFsckIds.map((id) => [`fetch.fsck.${id}`, "ignore"] as const),
  ["core.hooksPath", "/dev/null"],
];

/** Turns config pairs into GIT_CONFIG_COUNT/KEY/VALUE variables: in the environment, not in argv. */
export function configEnv(pairs: readonly (readonly [key: string, value: string])[]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}
