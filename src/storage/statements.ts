import type { Queryable, SqlRow } from './dialect/sql-dialect';
import { dialectOf } from './engines';

/**
 * Runs one statement of house SQL (see SqlDialect) where `source` runs statements: a manager's
 * transaction, a query runner's connection, or any pooled connection of a data source. Answers
 * its rows. For code that has no injected dialect; the dialect's own `query` does the same.
 */
export function query<Row = SqlRow>(
  source: Queryable,
  sql: string,
  params: readonly unknown[] = [],
): Promise<Row[]> {
  return dialectOf(source).query<Row>(source, sql, params);
}

/** Runs one write statement of house SQL and answers how many rows it changed. */
export function execute(
  source: Queryable,
  sql: string,
  params: readonly unknown[] = [],
): Promise<number> {
  return dialectOf(source).execute(source, sql, params);
}
