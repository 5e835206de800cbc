import type { EntityManager } from 'typeorm';
import { chunk, insertSql, SqlDialect } from './sql-dialect';

/** Rows per multi-row INSERT on a server (well under every server's placeholder limit). */
const ROWS_PER_INSERT = 500;

/** Inserts rows in the manager's transaction, in order, ROWS_PER_INSERT a statement. */
export async function insertInBatches<T>(
  dialect: SqlDialect,
  manager: EntityManager,
  table: string,
  columns: readonly string[],
  rows: readonly T[],
  valuesOf: (row: T) => unknown[],
): Promise<void> {
  for (const part of chunk(rows, ROWS_PER_INSERT)) {
    await dialect.execute(manager, insertSql(table, columns, part.length), part.flatMap(valuesOf));
  }
}
