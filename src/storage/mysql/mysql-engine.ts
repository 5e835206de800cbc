import type { DataSource } from 'typeorm';
import { insertInBatches } from '../dialect/batched-insert';
import type { DatabaseEngine } from '../engine/database-engine';
import { PooledTransactionRunner } from '../transactions/pooled-transaction-runner';
import { mysqlDataSourceOptions, parseMysqlUrl } from './mysql-connection';
import { dialectOfFlavor, MYSQL } from './mysql-dialect';
import { withMysqlMigrationLock } from './mysql-migration-lock';
import { readMysqlOrderedRows } from './mysql-ordered-rows';
import { mysqlPoolStats } from './mysql-pool-stats';
import { mysqlProbe } from './mysql-probe';
import { MYSQL_REPLICAS } from './mysql-replicas';
import { prepareMysqlSchema } from './mysql-schema';
import { openMysqlSnapshot } from './mysql-snapshot';
import { identifyServer, knownServerFlavor } from './server-flavor';

/**
 * A MySQL data source's dialect as far as known without asking: a server not yet identified gets
 * MySQL's, which MariaDB speaks too (without RETURNING).
 */
const dialectNow = (dataSource: DataSource) =>
  dialectOfFlavor(knownServerFlavor(dataSource) ?? 'mysql');

/**
 * MySQL 8 and MariaDB 10.8+ through mysql2. TypeORM's `mysql` and `mariadb` types reach both: the
 * server is asked which it is (never the type, which hosts give either way).
 */
export const MYSQL_ENGINE: DatabaseEngine = {
  name: 'mysql',
  driverTypes: ['mysql', 'mariadb'],
  schemes: ['mysql:', 'mariadb:'],
  exampleUrl: 'mysql://user:pass@host:3306/db',
  parseUrl: (url) => parseMysqlUrl(url),
  dataSourceOptions: mysqlDataSourceOptions,
  dialect: dialectNow,
  resolveDialect: async (dataSource) => dialectOfFlavor((await identifyServer(dataSource)).flavor),
  transactionRunner: (dataSource, commits) =>
    new PooledTransactionRunner(dataSource, MYSQL.writeIsolation, commits),
  openSnapshot: openMysqlSnapshot,
  probe: mysqlProbe,
  withMigrationLock: withMysqlMigrationLock,
  readOrderedRows: readMysqlOrderedRows,
  insertRows: (manager, table, columns, rows, valuesOf) =>
    insertInBatches(dialectNow(manager.connection), manager, table, columns, rows, valuesOf),
  transactionalDdl: false,
  prepareSchema: prepareMysqlSchema,
  poolStats: mysqlPoolStats,
  replicas: MYSQL_REPLICAS,
};
