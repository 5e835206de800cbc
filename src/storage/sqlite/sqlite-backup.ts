import { closeSync, existsSync, fsyncSync, linkSync, openSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSource } from 'typeorm';

/** The part of better-sqlite3's Database the backup uses. */
interface SqliteDatabase {
  prepare(sql: string): { run(...params: unknown[]): unknown };
  pragma(sql: string): unknown;
  close(): void;
}
type SqliteConstructor = new (
  file: string,
  options: { readonly: boolean; fileMustExist: boolean },
) => SqliteDatabase;

/**
 * SQLite's online backup: VACUUM INTO, on a read-only connection of its own. It is one read
 * transaction, so the copy is the database as of one moment, and in WAL mode it holds no writer
 * back; the copy is whole and compacted, the WAL folded in. It is written beside `file` under a
 * temporary name, synced to disk, and linked to `file` when complete, so `file` never holds half a
 * backup and an existing file is never replaced.
 */
export function backupSqlite(dataSource: DataSource, file: string): void {
  const source = (dataSource.options as { database?: unknown }).database;
  if (typeof source !== 'string' || source === ':memory:')
    throw new Error('an in-memory database has nothing to back up');
  if (existsSync(file)) throw new Error(`${file} already exists: give a new file`);
  const partial = `${file}.partial-${process.pid}`;
  // The driver's own better-sqlite3: the module does not load it a second time.
  const Sqlite = (dataSource.driver as unknown as { sqlite: SqliteConstructor }).sqlite;
  const db = new Sqlite(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(partial);
    // On disk before it takes its name (SQLite does not sync VACUUM INTO's file), and linked, not
    // renamed: a file made at `file` meanwhile is refused (EEXIST), never replaced.
    syncFile(partial);
    linkSync(partial, file);
    syncFile(dirname(file));
  } finally {
    db.close();
    rmSync(partial, { force: true });
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
