import { conflictAssignments, insertSql, SqlDialect } from '../dialect/sql-dialect';
import { typeormExecute, typeormQuery } from '../dialect/typeorm-statements';
import type { ServerFlavor } from './server-flavor';

function mysqlDialect(flavor: ServerFlavor): SqlDialect {
  return {
    engine: 'mysql',
    product: flavor === 'mariadb' ? 'MariaDB' : 'MySQL',
    rowLocks: true,
    upsertReturning: flavor === 'mariadb',
    writeIsolation: 'REPEATABLE READ',
    query: typeormQuery,
    execute: typeormExecute,
    insertIgnore: (table, columns, rows) =>
      insertSql(table, columns, rows).replace(/^INSERT INTO/, 'INSERT IGNORE INTO'),
    upsert: (table, columns, _keyColumns, updates, rows) => {
      const assignments = conflictAssignments(updates, {
        current: (column) => column,
        incoming: (column) => `VALUES(${column})`,
        greater: 'GREATEST',
      });
      return `${insertSql(table, columns, rows)} ON DUPLICATE KEY UPDATE ${assignments}`;
    },
    withIndex: (table, index) => `${table} FORCE INDEX (${index})`,
    byPrimaryKey: (table) => `${table} FORCE INDEX (PRIMARY)`,
    untimed: (select) =>
      flavor === 'mariadb'
        ? `SET STATEMENT max_statement_time = 0 FOR ${select}`
        : select.replace(/^SELECT\b/, 'SELECT /*+ MAX_EXECUTION_TIME(0) */'),
    lockRows: (mode) => (mode === 'share' ? ' LOCK IN SHARE MODE' : ' FOR UPDATE'),
    ledgerWindow: (spaceId, start, end) => ({
      where: 'space_id = ? AND occurred_at >= ? AND occurred_at < ?',
      params: [spaceId, start, end],
    }),
    dropIndex: (table, index) => `DROP INDEX ${index} ON ${table}`,
    booleanLiteral: (value) => (value ? '1' : '0'),
    keyLock: () => undefined,
  };
}

/** MySQL's dialect (mysql2): no RETURNING. */
export const MYSQL = mysqlDialect('mysql');
/** MariaDB's dialect (mysql2): RETURNING on inserts and upserts. */
export const MARIADB = mysqlDialect('mariadb');

/** The dialect of a MySQL-protocol server of this flavour. */
export function dialectOfFlavor(flavor: ServerFlavor): SqlDialect {
  return flavor === 'mariadb' ? MARIADB : MYSQL;
}
