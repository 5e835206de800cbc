import { SCHEMA_PROFILES, SchemaProfile } from '../../common/graphql/schema-profile';
import { LOG_LEVELS, LogLevelName } from '../logging/log-levels';
import type { MetricsConfig } from '../metrics/metrics-endpoint';
import { parseRateLimitRules, RateLimitRule } from '../rate-limit/rate-limit-rules';
import {
  DEFAULT_DATABASE_URL,
  DatabaseConfig,
  IN_MEMORY_DATABASE_URL,
  isServerConfig,
  parseDatabaseUrl,
  redact,
  ServerConfig,
} from '../../storage/connection/database-url';

/** Everything the standalone service reads from its environment, validated once at start. */
export interface AppConfig {
  port: number;
  host: string;
  databaseUrl: string;
  database: DatabaseConfig;
  /** Replicas of the server for leaderboard reads (DATABASE_REPLICA_URLS), redacted URLs too. */
  databaseReplicas: ServerConfig[];
  databaseReplicaUrls: string[];
  /** Which schema /query serves (docs/api.md, Schema profiles); STRICT_MODE=true is `spec`. */
  schemaProfile: SchemaProfile;
  introspection: boolean;
  /** Signs cursors; when absent a secret is generated once and kept in the database. */
  cursorSecret?: string;
  migrateOnStart: boolean;
  nodeEnv: string;
  /** Shared state for several instances (rate limits); absent = this process alone. */
  redisUrl?: string;
  rateLimits: { token: RateLimitRule[]; address: RateLimitRule[] };
  /** POST /ingest: its own budget per token, and how much one request may carry. */
  ingest: IngestLimits;
  /** GET /export: its own budget per token, and exports one process streams at once. */
  boardExport: { rateLimits: RateLimitRule[]; maxConcurrent: number };
  /** In-process rank indexes: entries held across boards (0: pages from SQL only). */
  rankIndex: { maxEntries: number };
  /** Repeated identical /query requests are answered from memory this long (0: never). */
  responseCacheMs: number;
  /** Fastify's trustProxy: false, true, a hop count, or addresses/CIDRs of trusted proxies. */
  trustProxy: boolean | number | string[];
  limits: QueryLimits;
  requestTimeoutMs: number;
  /** Apollo's in-browser IDE on GET /query; off in production unless asked for. */
  graphqlIde: boolean;
  /** Origins allowed to call /query from a browser; none by default (tokens are for servers). */
  corsOrigins: string[];
  /** Log level, and JSON lines or readable lines ('auto': readable on a terminal outside production). */
  logging: { level: LogLevelName; format: 'json' | 'pretty' | 'auto' };
  /** GET /metrics: on a port of its own, on the main port for a bearer secret, both, or neither. */
  metrics: MetricsConfig;
}

export interface QueryLimits {
  maxBodyBytes: number;
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
  maxTokens: number;
}

export interface IngestLimits {
  rateLimits: RateLimitRule[];
  maxRecords: number;
  maxBodyBytes: number;
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

/**
 * SCHEMA_PROFILE, with STRICT_MODE=true kept as the older name of `spec`. The two naming different
 * profiles is refused rather than one silently winning.
 */
function readSchemaProfile(env: NodeJS.ProcessEnv, problems: string[]): SchemaProfile {
  const strict = readBoolean(env, 'STRICT_MODE', false, problems);
  const raw = env.SCHEMA_PROFILE;
  if (raw === undefined || raw.trim() === '') return strict ? 'spec' : 'extended';
  const value = raw.trim().toLowerCase();
  if (!(SCHEMA_PROFILES as readonly string[]).includes(value)) {
    problems.push(`SCHEMA_PROFILE must be one of ${SCHEMA_PROFILES.join(', ')} (got "${raw}")`);
    return 'extended';
  }
  if (strict && value !== 'spec') {
    problems.push(
      `STRICT_MODE=true means SCHEMA_PROFILE=spec, but SCHEMA_PROFILE is "${raw}": set only one of them`,
    );
  }
  return value as SchemaProfile;
}

function readInt(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
    return fallback;
  }
  return value;
}

function readRules(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: string,
  problems: string[],
): RateLimitRule[] {
  try {
    return parseRateLimitRules(name, env[name] || fallback);
  } catch (error) {
    problems.push((error as Error).message);
    return [];
  }
}

function readTrustProxy(raw: string | undefined, problems: string[]): boolean | number | string[] {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.some((e) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e))) {
    problems.push(`TRUST_PROXY must be true, false, a hop count or addresses/CIDRs (got "${raw}")`);
    return false;
  }
  return entries;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const problems: string[] = [];
  const rawPort = env.PORT || '3000';
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port < 0 || port > 65535) {
    problems.push(`PORT must be a whole number from 0 to 65535 (got "${rawPort}")`);
  }
  const databaseUrl = env.DATABASE_URL || DEFAULT_DATABASE_URL;
  let database: DatabaseConfig = parseDatabaseUrl(IN_MEMORY_DATABASE_URL);
  try {
    database = parseDatabaseUrl(databaseUrl);
  } catch (error) {
    problems.push((error as Error).message);
  }
  const replicaUrls = (env.DATABASE_REPLICA_URLS ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  const databaseReplicas: ServerConfig[] = [];
  for (const url of replicaUrls) {
    try {
      const replica = parseDatabaseUrl(url);
      if (!isServerConfig(replica) || replica.kind !== database.kind)
        throw new Error('a replica must be a server of the same kind as DATABASE_URL');
      databaseReplicas.push(replica);
    } catch (error) {
      problems.push(`DATABASE_REPLICA_URLS: ${redact(url)}: ${(error as Error).message}`);
    }
  }
  if (replicaUrls.length > 0 && !isServerConfig(database)) {
    problems.push(
      'DATABASE_REPLICA_URLS needs a database server in DATABASE_URL (mysql://, mariadb:// or postgres://)',
    );
  }
  const cursorSecret = env.CURSOR_SECRET || undefined;
  if (cursorSecret !== undefined && cursorSecret.length < 32) {
    problems.push('CURSOR_SECRET must be at least 32 characters when set');
  }
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl !== undefined && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    problems.push(`REDIS_URL must look like redis://host:6379 (got "${redact(redisUrl)}")`);
  }
  const nodeEnv = env.NODE_ENV || 'development';
  const corsOrigins = (env.CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      problems.push(
        `CORS_ORIGINS entries must be origins like https://app.example.com (got "${origin}")`,
      );
    }
  }
  const logLevel = (env.LOG_LEVEL || 'info').trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${env.LOG_LEVEL}")`);
  }
  const logFormat = (env.LOG_FORMAT || 'auto').trim().toLowerCase();
  if (!['json', 'pretty', 'auto'].includes(logFormat)) {
    problems.push(`LOG_FORMAT must be json, pretty or auto (got "${env.LOG_FORMAT}")`);
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && (metricsToken.length < 32 || /\s/.test(metricsToken))) {
    problems.push('METRICS_TOKEN must be at least 32 characters, without spaces, when set');
  }
  const metricsPort =
    env.METRICS_PORT === undefined || env.METRICS_PORT === ''
      ? undefined
      : readInt(env, 'METRICS_PORT', 0, 0, 65535, problems);
  const host = env.HOST || '0.0.0.0';
  const config: AppConfig = {
    port,
    host,
    databaseUrl: redact(databaseUrl),
    database,
    databaseReplicas,
    databaseReplicaUrls: replicaUrls.map(redact),
    schemaProfile: readSchemaProfile(env, problems),
    introspection: readBoolean(env, 'INTROSPECTION', true, problems),
    cursorSecret,
    migrateOnStart: readBoolean(env, 'MIGRATE_ON_START', true, problems),
    nodeEnv,
    redisUrl,
    rateLimits: {
      token: readRules(env, 'RATE_LIMIT_TOKEN', '20/1s,300/30s', problems),
      address: readRules(env, 'RATE_LIMIT_ADDRESS', '20/1s,300/60s', problems),
    },
    ingest: {
      rateLimits: readRules(env, 'RATE_LIMIT_INGEST', '50/1s,1000/60s', problems),
      maxRecords: readInt(env, 'INGEST_MAX_RECORDS', 10_000, 1, 100_000, problems),
      maxBodyBytes: readInt(env, 'INGEST_MAX_BODY_BYTES', 16_777_216, 1024, 268_435_456, problems),
    },
    boardExport: {
      // An export reads what thousands of pages would: a few an hour per token.
      rateLimits: readRules(env, 'RATE_LIMIT_EXPORT', '3/1m,30/1h', problems),
      maxConcurrent: readInt(env, 'EXPORT_MAX_CONCURRENT', 2, 1, 32, problems),
    },
    rankIndex: {
      maxEntries: readInt(env, 'RANK_INDEX_MAX_ENTRIES', 5_000_000, 0, 1_000_000_000, problems),
    },
    responseCacheMs: readInt(env, 'RESPONSE_CACHE_MS', 500, 0, 1000, problems),
    trustProxy: readTrustProxy(env.TRUST_PROXY, problems),
    limits: {
      maxBodyBytes: readInt(env, 'MAX_BODY_BYTES', 102_400, 1024, 10_485_760, problems),
      maxDepth: readInt(env, 'MAX_QUERY_DEPTH', 10, 2, 100, problems),
      maxAliases: readInt(env, 'MAX_QUERY_ALIASES', 30, 0, 1000, problems),
      maxCost: readInt(env, 'MAX_QUERY_COST', 20_000, 100, 10_000_000, problems),
      maxTokens: readInt(env, 'MAX_QUERY_TOKENS', 5_000, 100, 1_000_000, problems),
    },
    requestTimeoutMs: readInt(env, 'REQUEST_TIMEOUT_MS', 10_000, 100, 300_000, problems),
    graphqlIde: readBoolean(env, 'GRAPHQL_IDE', nodeEnv !== 'production', problems),
    corsOrigins,
    logging: {
      level: (LOG_LEVELS as readonly string[]).includes(logLevel)
        ? (logLevel as LogLevelName)
        : 'info',
      format: logFormat === 'json' || logFormat === 'pretty' ? logFormat : 'auto',
    },
    metrics: { port: metricsPort, host: env.METRICS_HOST || host, token: metricsToken },
  };
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    problems.push('METRICS_PORT must differ from PORT (set METRICS_TOKEN for /metrics on PORT)');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
