/**
 * Debian's Chromium driven by playwright-core (nothing downloaded): headless, with a fresh profile
 * (playwright-core makes a new user-data-dir per launch and removes it on close), and without the
 * background services that would dial out of a closed network.
 */
import { chromium, type Browser } from "playwright-core";

export const chromiumPath = process.env["DRIFTLESS_CHROMIUM"] ?? "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
