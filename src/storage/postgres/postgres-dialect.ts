import { conflictAssignments, insertSql, Queryable, SqlDialect } from '../dialect/sql-dialect';
import { runPostgres } from './pg-statements';

/**
 * PostgreSQL's dialect (node-postgres): house SQL rendered to its spelling (house-sql.ts), upserts
 * with ON CONFLICT and RETURNING, no index hints (its planner reads the ranges by their indexes,
 * which the query-plans spec checks), FOR SHARE / FOR UPDATE.
 */
export const POSTGRES: SqlDialect = {
  engine: 'postgres',
  product: 'PostgreSQL',
  rowLocks: true,
  upsertReturning: true,
  writeIsolation: 'READ COMMITTED',
  query: async <Row>(source: Queryable, sql: string, params: readonly unknown[] = []) =>
    (await runPostgres(source, sql, params)).rows as Row[],
  execute: async (source, sql, params = []) =>
    (await runPostgres(source, sql, params)).rowCount ?? 0,
  insertIgnore: (table, columns, rows) =>
    `${insertSql(table, columns, rows)} ON CONFLICT DO NOTHING`,
  upsert: (table, columns, keyColumns, updates, rows) => {
    const assignments = conflictAssignments(updates, {
      current: (column) => `${table}.${column}`,
      incoming: (column) => `EXCLUDED.${column}`,
      greater: 'GREATEST',
    });
    return `${insertSql(table, columns, rows)} ON CONFLICT (${keyColumns.join(', ')}) DO UPDATE SET ${assignments}`;
  },
  withIndex: (table) => table,
  byPrimaryKey: (table) => table,
  // The statement time limit is lifted where such reads run: in the transaction of an ordered
  // read (postgres-ordered-rows.ts), with SET LOCAL.
  untimed: (select) => select,
  lockRows: (mode) => (mode === 'share' ? ' FOR SHARE' : ' FOR UPDATE'),
  ledgerWindow: (spaceId, start, end) => ({
    where: 'space_id = ? AND occurred_at >= ? AND occurred_at < ?',
    params: [spaceId, start, end],
  }),
  dropIndex: (_table, index) => `DROP INDEX ${index}`,
  booleanLiteral: (value) => (value ? 'TRUE' : 'FALSE'),
  keyLock: (key) => ({
    sql: 'SELECT pg_advisory_xact_lock(hashtextextended(?, 0)) AS locked',
    params: [key],
  }),
};
