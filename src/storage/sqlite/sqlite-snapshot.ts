import type { DataSource } from 'typeorm';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import type { ReadSnapshot, SnapshotRow } from '../engine/read-snapshot';

/** The part of better-sqlite3's Database the snapshot uses. */
interface SqliteDatabase {
  prepare(sql: string): {
    all(...params: unknown[]): unknown[];
    get(...params: unknown[]): unknown;
  };
  exec(sql: string): void;
  pragma(sql: string, options?: { simple: boolean }): unknown;
  close(): void;
}
type SqliteConstructor = new (
  file: string,
  options: { readonly: boolean; fileMustExist: boolean },
) => SqliteDatabase;

/**
 * A read transaction on a read-only connection of its own (WAL lets it read while the writer
 * writes). Taken before this returns: a caller in a commit hook sees exactly what that commit left.
 */
export function openSqliteSnapshot(dataSource: DataSource): ReadSnapshot {
  const file = (dataSource.options as { database?: unknown }).database;
  if (typeof file !== 'string' || file === ':memory:')
    throw new LoyaltyException(
      ErrorCode.OPERATION_NOT_SUPPORTED,
      'This needs a SQLite database file: an in-memory database (sqlite::memory:) has no second connection to read a snapshot on',
    );
  // The driver's own better-sqlite3: the module does not load it a second time.
  const Sqlite = (dataSource.driver as unknown as { sqlite: SqliteConstructor }).sqlite;
  const db = new Sqlite(file, { readonly: true, fileMustExist: true });
  try {
    // Outside WAL a reader's lock holds every writer up until it ends, and better-sqlite3 waits
    // for a lock on the event loop: an export would stall the process's writes.
    if (db.pragma('journal_mode', { simple: true }) !== 'wal')
      throw new LoyaltyException(
        ErrorCode.OPERATION_NOT_SUPPORTED,
        "This needs the SQLite database in WAL mode (PRAGMA journal_mode = WAL, or TypeORM's enableWAL: true): otherwise reading a snapshot would hold every writer up",
      );
    db.pragma('busy_timeout = 5000');
    db.exec('BEGIN');
    // The first read pins the snapshot: BEGIN alone takes none.
    db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get();
  } catch (error) {
    db.close();
    throw error;
  }
  const takenAt = Date.now();
  let open = true;
  return {
    takenAt,
    all(sql, params) {
      try {
        return Promise.resolve(db.prepare(sql).all(...params) as SnapshotRow[]);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },
    release() {
      if (open) {
        open = false;
        db.close(); // ends the read transaction with the connection
      }
      return Promise.resolve();
    },
  };
}
