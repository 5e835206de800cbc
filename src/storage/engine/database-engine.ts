import type {
  DataSource,
  DataSourceOptions,
  EntityManager,
  Logger,
  MixedList,
  QueryRunner,
} from 'typeorm';
import type { DatabaseEngineName, SqlDialect } from '../dialect/sql-dialect';
import type { RequirementsKey, ServerRequirements } from '../schema/server-requirements';
import type { CommitListener, TransactionRunner } from '../transactions/transaction-runner';
import type { DatabaseConfig } from './database-config';
import type { DatabaseProbe } from './database-probe';
import type { OrderedRead } from './ordered-rows';
import type { ParallelBoardRead } from './parallel-board-read';
import type { PoolStats } from './pool-stats';
import type { ReadSnapshot } from './read-snapshot';
import type { ReplicaDriver } from './replicas';
import type { SchemaTarget } from './schema-target';

/** What every data source of the module is made with, whatever its database. */
export interface CommonDataSourceOptions {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
  migrationsRun: boolean;
  migrationsTransactionMode: 'each';
  synchronize: false;
  logger?: Logger;
  logging?: true;
}

/** A migration that creates tables, as its preflight names it. */
export interface CreatingMigration {
  readonly name: string;
  /** The tables it creates: one already there, with no record of the migration, is refused. */
  readonly creates: readonly string[];
  /** What it needs of a server of this kind (a hook: a spec can ask for another's). */
  requirementsFor(server: RequirementsKey): ServerRequirements;
}

/**
 * Everything that differs between the databases the module runs on, beyond SQL syntax (the
 * dialect): one object per database, in its own folder (storage/sqlite, storage/mysql,
 * storage/postgres), chosen once per data source by storage/engines.ts. Adding a database is
 * adding a folder with one of these and its migrations' DDL; nothing outside storage changes.
 */
export interface DatabaseEngine {
  readonly name: DatabaseEngineName;
  /** The TypeORM driver types this engine serves (a data source's `options.type`). */
  readonly driverTypes: readonly string[];
  /** The URL schemes DATABASE_URL may use for it, with their colon (`mysql:`). */
  readonly schemes: readonly string[];
  /** An example URL, for messages. */
  readonly exampleUrl: string;
  /** Reads a DATABASE_URL of one of {@link schemes}; throws with a message fit for an operator. */
  parseUrl(url: string, cwd: string): DatabaseConfig;
  /** TypeORM options for a database of this engine, with the settings the module relies on. */
  dataSourceOptions(
    config: DatabaseConfig,
    common: CommonDataSourceOptions,
  ): Promise<DataSourceOptions>;
  /** The dialect, as far as known without asking the server (see resolveDialect). */
  dialect(dataSource: DataSource): SqlDialect;
  /** The dialect of the server behind the data source, asking it which it is where that matters. */
  resolveDialect(dataSource: DataSource): Promise<SqlDialect>;
  /** Runs write transactions; `commits` hears of each commit before its caller does. */
  transactionRunner(dataSource: DataSource, commits?: CommitListener): TransactionRunner;
  /** Opens a read snapshot (see ReadSnapshot) on a connection of its own. */
  openSnapshot(dataSource: DataSource): Promise<ReadSnapshot>;
  /** A health probe that does not queue behind the pool's busy connections. */
  probe(dataSource: DataSource, connectTimeoutMs: number): DatabaseProbe;
  /** Runs `work` (migrations) while no other process of this database's users runs its own. */
  withMigrationLock<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T>;
  /** Reads every row of an ordered query, straight from the driver (see OrderedRead). */
  readOrderedRows(dataSource: DataSource, read: OrderedRead): Promise<void>;
  /** Inserts rows in the manager's transaction, in order, in as few statements as fit. */
  insertRows<T>(
    manager: EntityManager,
    table: string,
    columns: readonly string[],
    rows: readonly T[],
    valuesOf: (row: T) => unknown[],
    rowsPerStatement: number,
  ): Promise<void>;
  /**
   * The migration's preflight: checks read-only that the server can take the whole migration and
   * answers how to write its DDL here, or throws MigrationRefusedError having changed nothing.
   */
  prepareSchema(queryRunner: QueryRunner, migration: CreatingMigration): Promise<SchemaTarget>;
  /** The pool's state, for metrics; undefined where there is no pool or it cannot be read. */
  poolStats(dataSource: DataSource): PoolStats | undefined;
  /**
   * Whether a schema change commits with its transaction (SQLite, PostgreSQL), so a migration cut
   * off leaves nothing behind; false where each DDL statement commits at once (MySQL/MariaDB).
   */
  readonly transactionalDdl: boolean;
  /** How read replicas are reached and followed; absent where there are none (SQLite). */
  readonly replicas?: ReplicaDriver;
  /** A whole-board read in worker threads where this engine offers one for this data source. */
  parallelBoardRead?(dataSource: DataSource): ParallelBoardRead | undefined;
  /**
   * Copies the database as of one moment into `file` (which must not exist) while others go on
   * writing; absent where the server's own dump tools do it (docs/operations.md, Backup).
   */
  readonly onlineBackup?: (dataSource: DataSource, file: string) => void;
}
