import type { DatabaseConfig } from '../engine/database-config';
import { redact } from '../engine/server-url';
import { ENGINES } from '../engines';

export type { DatabaseConfig, ServerConfig } from '../engine/database-config';
export { isServerConfig } from '../engine/database-config';
export { redact } from '../engine/server-url';

export const DEFAULT_DATABASE_URL = 'sqlite:./data/loyalty.sqlite';

/** A database of its own in memory, gone with the process (the schema printer's). */
export const IN_MEMORY_DATABASE_URL = 'sqlite::memory:';

/** The URLs DATABASE_URL takes, for messages. */
const EXPECTED = ENGINES.map((engine) => engine.exampleUrl).join(', ');

/**
 * Reads `DATABASE_URL`: `sqlite:<path>` (relative to the working directory), `sqlite::memory:`,
 * `mysql://user:pass@host:port/db` (`mariadb://` alike) or `postgres://user:pass@host:port/db`
 * (`postgresql://` alike). Throws with a message fit for an operator.
 */
export function parseDatabaseUrl(url: string, cwd: string = process.cwd()): DatabaseConfig {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase();
  const engine = ENGINES.find((candidate) => scheme && candidate.schemes.includes(scheme));
  if (engine) return engine.parseUrl(url, cwd);
  throw new Error(
    scheme && url.slice(scheme.length).startsWith('//')
      ? `DATABASE_URL: unsupported scheme "${scheme}"; use ${ENGINES.flatMap((e) => e.schemes).join(', ')}`
      : `DATABASE_URL: cannot read "${redact(url)}"; expected ${EXPECTED}`,
  );
}
