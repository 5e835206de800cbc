import type { EntityManager } from 'typeorm';
import { chunk, insertSql } from './dialect/sql-dialect';
import { nativeSqlite } from './sqlite/sqlite-native';

/** Rows per multi-row INSERT on MySQL/MariaDB (well under their placeholder limit). */
const ROWS_PER_INSERT = 500;

/**
 * Inserts rows in the manager's transaction, in order: on SQLite, prepared statements of
 * `nativeRowsPerStatement` rows (several pay off only for AUTOINCREMENT tables, which update
 * sqlite_sequence once a statement), the rest one by one; elsewhere ROWS_PER_INSERT a statement.
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
