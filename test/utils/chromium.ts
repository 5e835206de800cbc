import { existsSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * The machine's Chromium, headless, as the browser specs drive it. A missing Chromium fails the
 * spec with how to install it: browser specs never skip.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is required at ${CHROMIUM} for the browser tests: apt-get install -y chromium (.ci/run does)`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}
