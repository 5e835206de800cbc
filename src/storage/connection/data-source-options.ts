import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSourceOptions, MixedList, Logger as TypeOrmLogger } from 'typeorm';
import { flavorOfVersion, ServerFlavor } from '../dialect/server-flavor';
import type { DatabaseConfig } from './database-url';

/** The page size of a new SQLite database (see buildDataSourceOptions). */
export const SQLITE_PAGE_SIZE = 16_384;
/** SQLite checkpoints its WAL once it holds this much (see buildDataSourceOptions). */
const WAL_CHECKPOINT_BYTES = 64 * 1024 * 1024;

export interface DataSourceExtras {
  /** The entity classes of the data source (a host's tables and the module's). */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string>;
  /** The migrations, in order. */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
  migrationsRun?: boolean;
  logger?: TypeOrmLogger;
  /**
   * MySQL or MariaDB; TypeORM reads MariaDB's catalog right only when told. The schema and the
   * dialect ask the server themselves (server-flavor.ts), whatever this says.
   */
  serverFlavor?: ServerFlavor;
}

/** TypeORM options for a database URL, with the connection settings the module relies on. */
export function buildDataSourceOptions(
  database: DatabaseConfig,
  extras: DataSourceExtras,
): DataSourceOptions {
  const common = {
    entities: extras.entities,
    migrations: extras.migrations,
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
      prepareDatabase: (db: { pragma(sql: string, options?: { simple: boolean }): unknown }) => {
        // Larger pages for a new database (an existing one keeps its size): an ingest commit
        // rewrites most board pages anyway, and fewer, larger ones cost less (docs/performance.md).
        // Set before journal_mode, which writes the first page.
        db.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        db.pragma('busy_timeout = 5000');
        // 64 MiB of page cache (the default is 2 MiB): bulk writes touch pages all over the
        // ledger's and the boards' indexes.
        db.pragma('cache_size = -65536');
        // Statement journals (one per upsert inside a transaction) in memory, not a small file
        // write each; other temporary files too (a large sort's cost: docs/operations.md, Memory).
        db.pragma('temp_store = MEMORY');
        // Checkpoint at 64 MiB, not SQLite's 4 MiB: one ingest commit dirties thousands of pages,
        // so the default checkpointed after nearly every commit. The interval is counted in pages;
        // the WAL file is cut back to that size after a checkpoint.
        const pageSize = Number(db.pragma('page_size', { simple: true }));
        db.pragma(`wal_autocheckpoint = ${Math.floor(WAL_CHECKPOINT_BYTES / pageSize)}`);
        db.pragma(`journal_size_limit = ${WAL_CHECKPOINT_BYTES}`);
      },
    };
  }
  return {
    ...common,
    type: extras.serverFlavor ?? 'mysql',
    host: database.host,
    port: database.port,
    username: database.username,
    password: database.password,
    database: database.database,
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
  database: DatabaseConfig,
): Promise<ServerFlavor | undefined> {
  if (database.kind !== 'mysql') return undefined;
  try {
    // Loaded here, not at the top: mysql2 is an optional peer, which SQLite hosts do not install.
    const { createConnection } = await import('mysql2/promise');
    const connection = await createConnection({
      host: database.host,
      port: database.port,
      user: database.username,
      password: database.password,
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

/** {@link buildDataSourceOptions} after asking the server which flavour it is. */
export async function resolveDataSourceOptions(
  database: DatabaseConfig,
  extras: DataSourceExtras,
): Promise<DataSourceOptions> {
  return buildDataSourceOptions(database, {
    ...extras,
    serverFlavor: await detectServerFlavor(database),
  });
}
