import type { DataSource, EntityManager } from 'typeorm';
import { chunk, dialectOf, insertSql } from '../dialect/sql-dialect';

/** The part of a better-sqlite3 prepared statement the service uses. */
export interface NativeStatement {
  /** `changes`: the rows the statement inserted, updated or deleted. */
  run(...parameters: unknown[]): { changes: number };
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
  /** Rows one at a time, as SQLite steps: for reads too large to hold at once. */
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
}

/** Prepares a statement on a SQLite connection, once per connection and SQL text (keep it fixed). */
export type PrepareNative = (sql: string) => NativeStatement;

interface NativeDatabase {
  prepare(sql: string): NativeStatement;
}

const prepared = new WeakMap<NativeDatabase, Map<string, NativeStatement>>();

/**
 * SQLite only (undefined elsewhere): the better-sqlite3 connection under a manager or data source,
 * for statements run row by row. TypeORM's driver has one connection per data source, so inside a
 * transaction of TransactionRunner these statements are part of it.
 *
 * Why: through TypeORM, a statement costs a promise, a lookup of its SQL text in a cache and a
 * wrapper object; writing many rows therefore took multi-row statements, which SQLite runs more
 * slowly than the same rows one by one on a prepared statement (measured on board upserts: about
 * 20 us a row in statements of 500 rows, 15 us one by one).
 */
export function nativeSqlite(source: EntityManager | DataSource): PrepareNative | undefined {
  if (dialectOf(source).kind !== 'sqlite') return undefined;
  const connection = 'connection' in source ? source.connection : source;
  const database = (connection.driver as unknown as { databaseConnection?: NativeDatabase })
    .databaseConnection;
  if (!database) return undefined;
  let statements = prepared.get(database);
  if (!statements) {
    statements = new Map();
    prepared.set(database, statements);
  }
  const cache = statements;
  return (sql) => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = database.prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
}

/** Rows per multi-row INSERT on MySQL/MariaDB (well under their placeholder limit). */
const ROWS_PER_INSERT = 500;

/**
 * Inserts rows in the manager's transaction, in the order given: on SQLite on prepared statements
 * (see nativeSqlite) of `sqliteRowsPerStatement` rows, the remainder one by one; elsewhere
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
  sqliteRowsPerStatement = 1,
): Promise<void> {
  const native = nativeSqlite(manager);
  if (native) {
    let at = 0;
    if (sqliteRowsPerStatement > 1 && rows.length >= sqliteRowsPerStatement) {
      const insertMany = native(insertSql(table, columns, sqliteRowsPerStatement));
      const values: unknown[] = [];
      for (; at + sqliteRowsPerStatement <= rows.length; at += sqliteRowsPerStatement) {
        values.length = 0;
        for (let i = at; i < at + sqliteRowsPerStatement; i++)
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
