import type { DataSourceOptions } from 'typeorm';
import type { DatabaseConfig } from '../engine/database-config';
import type { CommonDataSourceOptions } from '../engine/database-engine';
import { readServerUrl } from '../engine/server-url';
import { flavorOfVersion, ServerFlavor } from './server-flavor';

/** Reads `mysql://user:pass@host:port/db` (`mariadb://` alike). */
export function parseMysqlUrl(url: string): DatabaseConfig {
  const parsed = readServerUrl(url, 'mysql://user:pass@host:3306/db');
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database)
    throw new Error('DATABASE_URL: the database name is missing (mysql://host:3306/<db>)');
  return {
    kind: 'mysql',
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 3306,
    username: decodeURIComponent(parsed.username) || 'root',
    password: decodeURIComponent(parsed.password),
    database,
  };
}

/**
 * TypeORM options for a MySQL or MariaDB server, asking it first which it is (TypeORM reads
 * MariaDB's catalog right only when told; the schema and the dialect ask the server themselves,
 * whatever this says).
 */
export async function mysqlDataSourceOptions(
  config: DatabaseConfig,
  common: CommonDataSourceOptions,
): Promise<DataSourceOptions> {
  if (config.kind !== 'mysql') throw new Error(`Not a MySQL database: ${config.kind}`);
  return {
    ...common,
    type: await detectServerFlavor(config),
    host: config.host,
    port: config.port,
    username: config.username,
    password: config.password,
    database: config.database,
    charset: 'utf8mb4',
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: false,
    // A database that does not answer is reported in seconds, not after the driver's 10 s.
    connectTimeout: 3_000,
    extra: { connectionLimit: 10 },
  };
}

/**
 * Asks a MySQL-protocol server which one it is, so `mysql://` URLs work against MariaDB too. An
 * unreachable server answers 'mysql' here and is reported by TypeORM's own connection attempt.
 */
export async function detectServerFlavor(
  config: Extract<DatabaseConfig, { kind: 'mysql' | 'postgres' }>,
): Promise<ServerFlavor> {
  try {
    // Loaded here, not at the top: mysql2 is an optional peer, which other hosts do not install.
    const { createConnection } = await import('mysql2/promise');
    const connection = await createConnection({
      host: config.host,
      port: config.port,
      user: config.username,
      password: config.password,
      connectTimeout: 5000,
    });
    try {
      const [rows] = await connection.query('SELECT VERSION() AS version');
      return flavorOfVersion(String((rows as Array<{ version: string }>)[0]?.version));
    } finally {
      await connection.end();
    }
  } catch {
    return 'mysql';
  }
}
