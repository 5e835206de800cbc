import type { DataSourceOptions } from 'typeorm';
import type { DatabaseConfig, ServerConfig } from '../engine/database-config';
import type { CommonDataSourceOptions } from '../engine/database-engine';
import { readServerUrl } from '../engine/server-url';

const SSL_MODES = ['disable', 'require', 'verify-full'] as const;

/**
 * Reads `postgres://user:pass@host:port/db` (`postgresql://` alike), with an optional
 * `?sslmode=disable|require|verify-full` as libpq spells it.
 */
export function parsePostgresUrl(url: string): DatabaseConfig {
  const parsed = readServerUrl(url, 'postgres://user:pass@host:5432/db');
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database)
    throw new Error('DATABASE_URL: the database name is missing (postgres://host:5432/<db>)');
  if (!parsed.hostname)
    throw new Error('DATABASE_URL: the server is missing (postgres://user:pass@HOST:5432/db)');
  const unknown = [...parsed.searchParams.keys()].filter((name) => name !== 'sslmode');
  if (unknown.length > 0)
    throw new Error(
      `DATABASE_URL: unknown parameter ${unknown.map((name) => `"${name}"`).join(', ')}; only sslmode is read`,
    );
  const sslmode = parsed.searchParams.get('sslmode') ?? undefined;
  if (sslmode !== undefined && !(SSL_MODES as readonly string[]).includes(sslmode))
    throw new Error(
      `DATABASE_URL: sslmode must be one of ${SSL_MODES.join(', ')} (got "${sslmode}")`,
    );
  return {
    kind: 'postgres',
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 5432,
    username: decodeURIComponent(parsed.username) || 'postgres',
    password: decodeURIComponent(parsed.password),
    database,
    ...(sslmode ? { tls: sslmode as (typeof SSL_MODES)[number] } : {}),
  };
}

/** node-postgres's `ssl` for an sslmode. */
export function sslOf(tls: ServerConfig['tls']): boolean | { rejectUnauthorized: false } {
  return tls === 'require' ? { rejectUnauthorized: false } : tls === 'verify-full' ? true : false;
}

/** TypeORM options for a PostgreSQL database, with the settings the module relies on. */
export function postgresDataSourceOptions(
  config: DatabaseConfig,
  common: CommonDataSourceOptions,
): DataSourceOptions {
  if (config.kind !== 'postgres') throw new Error(`Not a PostgreSQL database: ${config.kind}`);
  return {
    ...common,
    type: 'postgres',
    host: config.host,
    port: config.port,
    username: config.username,
    password: config.password,
    database: config.database,
    ssl: sslOf(config.tls),
    applicationName: 'loyalty-leaderboard',
    // A database that does not answer is reported in seconds, not after TCP gives up.
    connectTimeoutMS: 3_000,
    poolSize: 10,
  };
}
