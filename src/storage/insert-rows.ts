import type { EntityManager } from 'typeorm';
import { chunk, insertSql } from './dialect/sql-dialect';
import { nativeSqlite } from './sqlite/sqlite-native';

/** Rows per multi-row INSERT on MySQL/MariaDB (well under their placeholder limit). */
const ROWS_PER_INSERT = 500;

/**
 * Inserts rows in the manager's transaction, in the order given: on SQLite on prepared statements
 * (see nativeSqlite) of `nativeRowsPerStatement` rows, the remainder one by one; elsewhere
 * ROWS_PER_INSERT rows to a statement. On SQLite, one row a statement is the faster for a
 * WITHOUT ROWID table with an index (the ledger: 3.0-3.8 us a row, against 4.0-4.6 in statements
 * of 50), and several rows for an AUTOINCREMENT table, which updates sqlite_sequence once a
 * statement (board_changes: 0.9-1.0 us a row in statements of 64, against 2.3-3.0 one by one).
 * Keep rows times columns under SQLite's limit of 32,766 parameters a statement.
 */
export async function insertRows<T>(
  manager: EntityManager,
  table: string,
  columns: readonly string[],
  rows: readonly T[],
  valuesOf: (row: T) => unknown[],
  nativeRowsPerStatement = 1,
): Promise<void> {
  const native = nativeSqlite(manager);
  if (native) {
    let at = 0;
    if (nativeRowsPerStatement > 1 && rows.length >= nativeRowsPerStatement) {
      const insertMany = native(insertSql(table, columns, nativeRowsPerStatement));
      const values: unknown[] = [];
      for (; at + nativeRowsPerStatement <= rows.length; at += nativeRowsPerStatement) {
        values.length = 0;
        for (let i = at; i < at + nativeRowsPerStatement; i++)
          for (const value of valuesOf(rows[i])) values.push(value);
        insertMany.run(...values);
      }
    }
    const insert = native(insertSql(table, columns, 1));
    for (; at < rows.length; at++) insert.run(...valuesOf(rows[at]));
    return;
  }
  for (const part of chunk(rows, ROWS_PER_INSERT)) {
    await manager.query(insertSql(table, columns, part.length), part.flatMap(valuesOf));
  }
}
