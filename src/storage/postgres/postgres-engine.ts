import { insertInBatches } from '../dialect/batched-insert';
import type { DatabaseEngine } from '../engine/database-engine';
import { PooledTransactionRunner } from '../transactions/pooled-transaction-runner';
import { parsePostgresUrl, postgresDataSourceOptions } from './postgres-connection';
import { POSTGRES } from './postgres-dialect';
import { withPostgresMigrationLock } from './postgres-migration-lock';
import { readPostgresOrderedRows } from './postgres-ordered-rows';
import { postgresPoolStats } from './postgres-pool-stats';
import { postgresProbe } from './postgres-probe';
import { POSTGRES_REPLICAS } from './postgres-replicas';
import { preparePostgresSchema } from './postgres-schema';
import { openPostgresSnapshot } from './postgres-snapshot';

/** PostgreSQL 13+ through node-postgres (`pg`), TypeORM's `postgres` type. */
export const POSTGRES_ENGINE: DatabaseEngine = {
  name: 'postgres',
  driverTypes: ['postgres'],
  schemes: ['postgres:', 'postgresql:'],
  exampleUrl: 'postgres://user:pass@host:5432/db',
  parseUrl: (url) => parsePostgresUrl(url),
  dataSourceOptions: (config, common) => Promise.resolve(postgresDataSourceOptions(config, common)),
  dialect: () => POSTGRES,
  resolveDialect: () => Promise.resolve(POSTGRES),
  transactionRunner: (dataSource, commits) =>
    new PooledTransactionRunner(dataSource, POSTGRES.writeIsolation, commits),
  openSnapshot: openPostgresSnapshot,
  probe: postgresProbe,
  withMigrationLock: withPostgresMigrationLock,
  readOrderedRows: readPostgresOrderedRows,
  insertRows: (manager, table, columns, rows, valuesOf) =>
    insertInBatches(POSTGRES, manager, table, columns, rows, valuesOf),
  transactionalDdl: true,
  prepareSchema: preparePostgresSchema,
  poolStats: postgresPoolStats,
  replicas: POSTGRES_REPLICAS,
};
