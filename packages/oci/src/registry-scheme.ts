/**
 * Which scheme a registry is reached over, as go-containerregistry decides it for Config Sync: HTTPS for
 * every host, and for the hosts its name rule calls local or private, HTTPS first with a fallback to
 * plain HTTP (`name.Registry.Scheme()` and `transport.Ping`).
 */

export type RegistryScheme = "https" | "http";

const privateIpv4Blocks: readonly (readonly [number, number])[] = [
  [0x0a000000, 8], // 10.0.0.0/8
  [0xac100000, 12], // 172.16.0.0/12
  [0xc0a80000, 16], // 192.168.0.0/16
];

/** A dotted-quad IPv4 address as Go's net.ParseIP reads one (no leading zeros), as a 32-bit number. */
function parseIpv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(?:0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = value * 256 + Number(part);
  }
  return value;
}

/** go-containerregistry's isRFC1918: the text before the first ':' is an IPv4 address in a private block. */
function isRfc1918(registry: string): boolean {
  const ip = parseIpv4(registry.split(":")[0] ?? "");
  if (ip === undefined) return false;
  return privateIpv4Blocks.some(([base, bits]) => ip >>> (32 - bits) === base >>> (32 - bits));
}

/**
 * True when go-containerregistry's `Scheme()` says http for this registry name (`host[:port]` as the image
 * reference writes it): an RFC 1918 IPv4 address, `localhost:<port>`, a name ending `.local` or `.localhost`
 * (with a port or not), or one containing `127.0.0.1` or `::1` anywhere. The rule reads the name, not the
 * address it resolves to; kept as it is so the same images sync (docs/design/reconciler.md says what it allows).
 */
export function allowsPlainHttp(registry: string): boolean {
  return (
    isRfc1918(registry) ||
    registry.startsWith("localhost:") ||
    /\.local(?:host)?(?::\d{1,5})?$/.test(registry) ||
    registry.includes("127.0.0.1") ||
    registry.includes("::1")
  );
}

/** go-containerregistry's wait before the http attempt races the https one (Go's happy-eyeballs delay). */
export const fallbackDelayMs = 300;

/** Asks the registry over one scheme; resolves when it answered as a registry, rejects otherwise. */
export type SchemeProbe = (scheme: RegistryScheme, signal: AbortSignal) => Promise<void>;

/**
 * The first scheme whose probe succeeds: https at once, http once https has failed or after
 * `fallbackDelayMs`, the loser aborted (go-containerregistry's `pingParallel`). When both fail, an
 * AggregateError of the https error, then the http one.
 */
export function firstAnsweringScheme(probe: SchemeProbe, signal?: AbortSignal): Promise<RegistryScheme> {
  return new Promise((resolve, reject) => {
    const controllers = { https: new AbortController(), http: new AbortController() };
    const failures = new Map<RegistryScheme, unknown>();
    let settled = false;
    let fallbackTimer: NodeJS.Timeout | undefined;

    const startHttp = (): void => {
      clearTimeout(fallbackTimer);
      fallbackTimer = undefined;
      start("http");
    };
    const start = (scheme: RegistryScheme): void => {
      const attemptSignal =
        signal === undefined ? controllers[scheme].signal : AbortSignal.any([signal, controllers[scheme].signal]);
      probe(scheme, attemptSignal).then(
        () => {
          if (settled) return;
          settled = true;
          clearTimeout(fallbackTimer);
          controllers[scheme === "https" ? "http" : "https"].abort();
          resolve(scheme);
        },
        (error: unknown) => {
          if (settled) return;
          failures.set(scheme, error);
          if (failures.size === 2) {
            settled = true;
            reject(new AggregateError([failures.get("https"), failures.get("http")], "no scheme answered"));
          } else if (scheme === "https" && fallbackTimer !== undefined) startHttp();
        },
      );
    };

    start("https");
    fallbackTimer = setTimeout(startHttp, fallbackDelayMs);
  });
}
