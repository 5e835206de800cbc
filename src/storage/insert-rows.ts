import type { EntityManager } from 'typeorm';
import { engineOf } from './engines';

/**
 * Inserts rows in the manager's transaction, in order, in as few statements as each database
 * takes best: where one writer holds the database (SQLite), prepared statements of
 * `nativeRowsPerStatement` rows (several pay off only for AUTOINCREMENT tables) and the rest one
 * by one; on a server, hundreds of rows a statement. Keep rows times columns under SQLite's limit
 * of 32,766 parameters a statement.
 */
export function insertRows<T>(
  manager: EntityManager,
  table: string,
  columns: readonly string[],
  rows: readonly T[],
  valuesOf: (row: T) => unknown[],
  nativeRowsPerStatement = 1,
): Promise<void> {
  return engineOf(manager).insertRows(
    manager,
    table,
    columns,
    rows,
    valuesOf,
    nativeRowsPerStatement,
  );
}
