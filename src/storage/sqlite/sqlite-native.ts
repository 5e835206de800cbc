import type { DataSource, EntityManager } from 'typeorm';
import type { PrepareSync, SyncStatement } from '../transactions/transaction-runner';

interface NativeDatabase {
  prepare(sql: string): SyncStatement;
}

const prepared = new WeakMap<NativeDatabase, Map<string, SyncStatement>>();

/**
 * The better-sqlite3 connection under a manager or data source of the SQLite driver, for
 * statements run row by row. TypeORM's driver has one connection per data source, so inside a
 * transaction of TransactionRunner these statements are part of it. Why: one row a prepared
 * statement beats TypeORM's multi-row statements, each costing a promise and a cache lookup.
 */
export function nativeSqlite(source: EntityManager | DataSource): PrepareSync | undefined {
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
