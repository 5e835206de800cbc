import type { DataSource } from 'typeorm';
import type { DatabaseEngine } from '../engine/database-engine';
import { EmbeddedProbe } from './embedded-probe';
import { backupSqlite } from './sqlite-backup';
import { GroupCommitTransactionRunner } from './group-commit-transaction-runner';
import { readSqliteBoardInWorkers } from './parallel-board-read';
import { parseSqliteUrl, sqliteDataSourceOptions } from './sqlite-connection';
import { SQLITE } from './sqlite-dialect';
import { insertSqliteRows } from './sqlite-insert-rows';
import { withSqliteMigrationLock } from './sqlite-migration-lock';
import { readSqliteOrderedRows } from './sqlite-ordered-rows';
import { prepareSqliteSchema } from './sqlite-schema';
import { openSqliteSnapshot } from './sqlite-snapshot';

const fileOf = (dataSource: DataSource) => (dataSource.options as { database?: unknown }).database;

/**
 * SQLite through better-sqlite3: the embedded default. One writer connection holds the database
 * and commits queued units together; readers read the main connection (WAL).
 */
export const SQLITE_ENGINE: DatabaseEngine = {
  name: 'sqlite',
  driverTypes: ['better-sqlite3'],
  schemes: ['sqlite:'],
  exampleUrl: 'sqlite:./data/loyalty.sqlite',
  parseUrl: parseSqliteUrl,
  dataSourceOptions: (config, common) => Promise.resolve(sqliteDataSourceOptions(config, common)),
  dialect: () => SQLITE,
  resolveDialect: () => Promise.resolve(SQLITE),
  transactionRunner: (dataSource) => new GroupCommitTransactionRunner(dataSource),
  openSnapshot: (dataSource) => {
    try {
      return Promise.resolve(openSqliteSnapshot(dataSource));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  },
  probe: (dataSource) => new EmbeddedProbe(dataSource),
  withMigrationLock: withSqliteMigrationLock,
  readOrderedRows: readSqliteOrderedRows,
  insertRows: insertSqliteRows,
  transactionalDdl: true,
  prepareSchema: prepareSqliteSchema,
  // One connection, no pool.
  poolStats: () => undefined,
  onlineBackup: backupSqlite,
  /** Only a database file can be opened again by a worker; an in-memory one exists once. */
  parallelBoardRead: (dataSource) => {
    const file = fileOf(dataSource);
    if (typeof file !== 'string' || file === '' || file === ':memory:') return undefined;
    return (statements, sink, options) => readSqliteBoardInWorkers(file, statements, sink, options);
  },
};
