import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSourceOptions, Logger as TypeOrmLogger } from 'typeorm';
import { LOYALTY_ENTITIES, LOYALTY_MIGRATIONS } from '../loyalty.entities';
import type { DatabaseConfig } from './database-url';

export interface DataSourceExtras {
  migrationsRun?: boolean;
  logger?: TypeOrmLogger;
}

/** TypeORM options for our own host, the CLI and ormconfig.ts: one definition for all three. */
export function buildDataSourceOptions(
  database: DatabaseConfig,
  extras: DataSourceExtras = {},
): DataSourceOptions {
  const common = {
    entities: LOYALTY_ENTITIES,
    migrations: LOYALTY_MIGRATIONS,
    migrationsRun: extras.migrationsRun ?? false,
    migrationsTransactionMode: 'each' as const,
    synchronize: false,
    ...(extras.logger ? { logger: extras.logger, logging: true as const } : {}),
  };
  if (database.kind === 'sqlite') {
    if (database.file !== ':memory:') mkdirSync(dirname(database.file), { recursive: true });
    return {
      ...common,
      type: 'better-sqlite3',
      database: database.file,
      // WAL lets readers go on while the writer writes; NORMAL is durable at each checkpoint.
      prepareDatabase: (db: { pragma(sql: string): unknown }) => {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        db.pragma('busy_timeout = 5000');
      },
    };
  }
  return {
    ...common,
    type: 'mysql',
    host: database.host,
    port: database.port,
    username: database.username,
    password: database.password,
    database: database.database,
    charset: 'utf8mb4',
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: false,
    extra: { connectionLimit: 10 },
  };
}
