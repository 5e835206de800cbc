import type { DataSource, EntityManager } from 'typeorm';
import { dialectOf } from '../dialect/sql-dialect';

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
 * transaction of TransactionRunner these statements are part of it. Why: one row a prepared
 * statement beats TypeORM's multi-row statements, each costing a promise and a cache lookup.
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
