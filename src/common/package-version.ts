import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const PACKAGE = 'loyalty-leaderboard';

/**
 * The package's version, from its package.json: the nearest one up from this file that is ours
 * (the checkout's, or the installed package's). 'unknown' if none is found.
 */
function readVersion(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === PACKAGE && typeof manifest.version === 'string')
        return manifest.version;
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}

/** The running service's version, as /health and every log line report it. */
export const SERVICE_VERSION = readVersion();
