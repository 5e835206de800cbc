import {
  DEFAULT_DATABASE_URL,
  DatabaseConfig,
  parseDatabaseUrl,
  redact,
} from '../storage/database-url';

/** Everything the standalone service reads from its environment, validated once at start. */
export interface AppConfig {
  port: number;
  host: string;
  databaseUrl: string;
  database: DatabaseConfig;
  /** Hide PRODUCT.md's extensions, leaving exactly the schema of SPEC.md. */
  strictMode: boolean;
  introspection: boolean;
  /** Signs cursors; when absent a secret is generated once and kept in the database. */
  cursorSecret?: string;
  migrateOnStart: boolean;
  nodeEnv: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

function readBoolean(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: boolean,
  problems: string[],
): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  problems.push(`${name} must be true or false (got "${raw}")`);
  return fallback;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const problems: string[] = [];
  const rawPort = env.PORT || '3000';
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port < 0 || port > 65535) {
    problems.push(`PORT must be a whole number from 0 to 65535 (got "${rawPort}")`);
  }
  const databaseUrl = env.DATABASE_URL || DEFAULT_DATABASE_URL;
  let database: DatabaseConfig = { kind: 'sqlite', file: ':memory:' };
  try {
    database = parseDatabaseUrl(databaseUrl);
  } catch (error) {
    problems.push((error as Error).message);
  }
  const cursorSecret = env.CURSOR_SECRET || undefined;
  if (cursorSecret !== undefined && cursorSecret.length < 32) {
    problems.push('CURSOR_SECRET must be at least 32 characters when set');
  }
  const config: AppConfig = {
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl: redact(databaseUrl),
    database,
    strictMode: readBoolean(env, 'STRICT_MODE', false, problems),
    introspection: readBoolean(env, 'INTROSPECTION', true, problems),
    cursorSecret,
    migrateOnStart: readBoolean(env, 'MIGRATE_ON_START', true, problems),
    nodeEnv: env.NODE_ENV || 'development',
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
