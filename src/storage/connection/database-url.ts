import { isAbsolute, resolve } from 'node:path';

export type DatabaseConfig =
  | { kind: 'sqlite'; file: string }
  | {
      kind: 'mysql';
      host: string;
      port: number;
      username: string;
      password: string;
      database: string;
    };

export const DEFAULT_DATABASE_URL = 'sqlite:./data/loyalty.sqlite';

/**
 * Reads `DATABASE_URL`: `sqlite:<path>` (relative to the working directory), `sqlite::memory:`,
 * or `mysql://user:pass@host:port/db` (`mariadb://` alike). Throws with a message fit for an
 * operator.
 */
export function parseDatabaseUrl(url: string, cwd: string = process.cwd()): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '')
      throw new Error('DATABASE_URL: sqlite: needs a file path, e.g. sqlite:./data/loyalty.sqlite');
    if (path === ':memory:') return { kind: 'sqlite', file: ':memory:' };
    // sqlite://./x read as a path is //./x, that is /x: a file far from the one meant.
    if (path.startsWith('//'))
      throw new Error(
        `DATABASE_URL: "${url}" names a host; use sqlite:./relative/path or sqlite:///absolute/path`,
      );
    return { kind: 'sqlite', file: isAbsolute(path) ? path : resolve(cwd, path) };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(
      `DATABASE_URL: cannot read "${redact(url)}"; expected sqlite:<path> or mysql://user:pass@host:3306/db`,
    );
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') {
    throw new Error(
      `DATABASE_URL: unsupported scheme "${parsed.protocol}"; use sqlite: or mysql://`,
    );
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database)
    throw new Error('DATABASE_URL: the database name is missing (mysql://host:3306/<db>)');
  const port = parsed.port ? Number(parsed.port) : 3306;
  return {
    kind: 'mysql',
    host: parsed.hostname,
    port,
    username: decodeURIComponent(parsed.username) || 'root',
    password: decodeURIComponent(parsed.password),
    database,
  };
}

/** For messages and logs: a URL with its password replaced. */
export function redact(url: string): string {
  // The authority ends at the last "@" before the path, as URL parsers read it.
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i.exec(url);
  if (!match || !match[2].includes(':')) return url;
  const user = match[2].slice(0, match[2].indexOf(':'));
  return `${match[1]}${user}:***@${url.slice(match[0].length)}`;
}
