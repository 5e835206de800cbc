import type { Queryable } from '../../src/storage/dialect/sql-dialect';
import { query } from '../../src/storage/statements';

/**
 * Runs a statement of house SQL (`?` placeholders, camelCase output names) on any of the
 * databases, as the service runs its own (storage/statements); rows typed loosely, for specs.
 */
export function runSql<Row = any>(
  source: Queryable,
  sql: string,
  params: readonly unknown[] = [],
): Promise<Row[]> {
  return query<Row>(source, sql, params);
}
