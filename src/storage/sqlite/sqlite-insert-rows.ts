import type { EntityManager } from 'typeorm';
import { insertSql } from '../dialect/sql-dialect';
import { nativeSqlite } from './sqlite-native';

/**
 * Inserts rows in the manager's transaction, in order, with prepared statements of
 * `rowsPerStatement` rows (several pay off only for AUTOINCREMENT tables, which update
 * sqlite_sequence once a statement), the rest one by one. Keep rows times columns under SQLite's
 * limit of 32,766 parameters a statement.
 */
export function insertSqliteRows<T>(
  manager: EntityManager,
  table: string,
  columns: readonly string[],
  rows: readonly T[],
  valuesOf: (row: T) => unknown[],
  rowsPerStatement: number,
): Promise<void> {
  const native = nativeSqlite(manager);
  if (!native) throw new Error('Not a SQLite connection');
  let at = 0;
  if (rowsPerStatement > 1 && rows.length >= rowsPerStatement) {
    const insertMany = native(insertSql(table, columns, rowsPerStatement));
    const values: unknown[] = [];
    for (; at + rowsPerStatement <= rows.length; at += rowsPerStatement) {
      values.length = 0;
      for (let i = at; i < at + rowsPerStatement; i++)
        for (const value of valuesOf(rows[i])) values.push(value);
      insertMany.run(...values);
    }
  }
  const insert = native(insertSql(table, columns, 1));
  for (; at < rows.length; at++) insert.run(...valuesOf(rows[at]));
  return Promise.resolve();
}
