import { conflictAssignments, insertSql, SqlDialect } from '../dialect/sql-dialect';
import { typeormExecute, typeormQuery } from '../dialect/typeorm-statements';

/** The day buckets of SQLite's ledger time index (migration 1764200000000). */
const LEDGER_DAY_MS = 86_400_000;

/** SQLite's dialect (better-sqlite3): house SQL is SQLite's own. */
export const SQLITE: SqlDialect = {
  engine: 'sqlite',
  product: 'SQLite',
  rowLocks: false,
  upsertReturning: true,
  // Unused: one writer holds the whole database (GroupCommitTransactionRunner).
  writeIsolation: 'REPEATABLE READ',
  query: typeormQuery,
  execute: typeormExecute,
  insertIgnore: (table, columns, rows) =>
    insertSql(table, columns, rows).replace(/^INSERT INTO/, 'INSERT OR IGNORE INTO'),
  upsert: (table, columns, keyColumns, updates, rows) => {
    const assignments = conflictAssignments(updates, {
      current: (column) => `${table}.${column}`,
      incoming: (column) => `excluded.${column}`,
      greater: 'MAX',
    });
    return `${insertSql(table, columns, rows)} ON CONFLICT (${keyColumns.join(', ')}) DO UPDATE SET ${assignments}`;
  },
  withIndex: (table, index) => `${table} INDEXED BY ${index}`,
  untimed: (select) => select,
  // The primary key's own index, whether the table has rowids or not.
  byPrimaryKey: (table) => `${table} INDEXED BY sqlite_autoindex_${table}_1`,
  lockRows: () => '',
  /**
   * SQLite's time index holds days: the condition names the days the window spans, which the
   * index finds, then the exact window. Integer division truncates toward 0 as Math.trunc does,
   * and the ledger holds whole milliseconds only.
   */
  ledgerWindow: (spaceId, start, end) => ({
    where: `space_id = ? AND occurred_at / ${LEDGER_DAY_MS} BETWEEN ? AND ?
       AND occurred_at >= ? AND occurred_at < ?`,
    params: [
      spaceId,
      Math.trunc(start / LEDGER_DAY_MS),
      Math.trunc((end - 1) / LEDGER_DAY_MS),
      start,
      end,
    ],
  }),
  dropIndex: (_table, index) => `DROP INDEX ${index}`,
  booleanLiteral: (value) => (value ? '1' : '0'),
  keyLock: () => undefined,
};
