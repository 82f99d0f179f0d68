import type { Transport } from "./repo-url.ts";

/**
 * The environment every git process runs in.
 *
 * Nothing from the host's git setup may change what is fetched or leak credentials into it: no
 * system or user config (a credential.helper=store there would write tokens to disk), no GIT_DIR
 * or GIT_INDEX_FILE inherited from whoever started the reconciler, no ssh-agent, no prompts (a
 * prompt with no terminal hangs until the timeout). Messages are forced to English because
 * classify.ts reads them.
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

function dropped(key: string): boolean {
  return (
    key.startsWith("GIT_") ||
    key === "SSH_ASKPASS" ||
    key === "SSH_AUTH_SOCK" ||
    key === "LANG" ||
    key === "LANGUAGE" ||
    key.startsWith("LC_")
  );
}

/** Turns config pairs into GIT_CONFIG_COUNT/KEY/VALUE variables: in the environment, not in argv. */
export function configEnv(pairs: readonly (readonly [key: string, value: string])[]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}
