import { existsSync, readdirSync } from 'node:fs';
import { isServerConfig, type DatabaseConfig } from '../engine/database-config';
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

/**
 * The file that opening `database` would create, because it is not there yet; undefined for a
 * database server, a database in memory, or a file that exists.
 */
export function fileItWouldCreate(database: DatabaseConfig): string | undefined {
  if (isServerConfig(database) || database.file === ':memory:') return undefined;
  return existsSync(database.file) ? undefined : database.file;
}

/** The embedded database files in `folder` (by their usual extensions), for messages. */
export function databaseFilesIn(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).filter((file) => /\.(sqlite3?|db)$/.test(file));
}
