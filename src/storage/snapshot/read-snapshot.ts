import { Inject, Injectable } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource, QueryRunner } from 'typeorm';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { dialectOf } from '../dialect/sql-dialect';

export type SnapshotRow = Record<string, unknown>;

/**
 * Reads that all see the database as of one moment, on a connection of their own, while writers
 * go on: a read transaction on SQLite (WAL), REPEATABLE READ with a consistent snapshot on
 * MySQL/MariaDB. Nothing is locked; what a write commits meanwhile is simply not seen. Hold one
 * only as long as needed: SQLite cannot checkpoint the WAL past an open snapshot, and InnoDB keeps
 * the undo history it needs.
 */
export interface ReadSnapshot {
  /** When the snapshot was taken (Date.now()). */
  readonly takenAt: number;
  all(sql: string, params: readonly unknown[]): Promise<SnapshotRow[]>;
  /** Ends the read transaction and gives the connection back; safe to call twice. */
  release(): Promise<void>;
}

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

/** Opens {@link ReadSnapshot}s on the module's database. */
@Injectable()
export class ReadSnapshots {
  constructor(@Inject(getDataSourceToken()) private readonly dataSource: DataSource) {}

  /**
   * A new snapshot. On SQLite it is taken before this returns (the call is synchronous up to its
   * promise), so a caller in a commit hook sees exactly what that commit left; on MySQL/MariaDB
   * when the returned promise resolves.
   */
  open(): Promise<ReadSnapshot> {
    try {
      return dialectOf(this.dataSource).kind === 'sqlite'
        ? Promise.resolve(this.openSqlite())
        : this.openPooled();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private openSqlite(): ReadSnapshot {
    const file = (this.dataSource.options as { database?: unknown }).database;
    if (typeof file !== 'string' || file === ':memory:')
      throw new LoyaltyException(
        ErrorCode.OPERATION_NOT_SUPPORTED,
        'This needs a SQLite database file: an in-memory database (sqlite::memory:) has no second connection to read a snapshot on',
      );
    // The driver's own better-sqlite3: the module does not load it a second time.
    const Sqlite = (this.dataSource.driver as unknown as { sqlite: SqliteConstructor }).sqlite;
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

  private async openPooled(): Promise<ReadSnapshot> {
    const runner: QueryRunner = this.dataSource.createQueryRunner('master');
    try {
      await runner.connect();
      await runner.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await runner.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    } catch (error) {
      await discard(runner);
      throw error;
    }
    const takenAt = Date.now();
    let open = true;
    return {
      takenAt,
      all: (sql, params) => runner.query(sql, [...params]) as Promise<SnapshotRow[]>,
      async release() {
        if (!open) return;
        open = false;
        try {
          await runner.query('COMMIT');
        } catch (error) {
          await discard(runner);
          throw error;
        }
        await runner.release();
      },
    };
  }
}

/**
 * Closes a pooled connection instead of giving it back: its session may still hold the pending
 * isolation level or the open read-only transaction, which the pool's next user must not inherit.
 */
async function discard(runner: QueryRunner): Promise<void> {
  const connection = (runner as unknown as { databaseConnection?: { destroy?: () => void } })
    .databaseConnection;
  connection?.destroy?.();
  await runner.release().catch(() => undefined);
}
