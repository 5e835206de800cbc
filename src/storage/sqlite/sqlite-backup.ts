import { existsSync, renameSync, rmSync } from 'node:fs';
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
 * temporary name and renamed when complete, so `file` never holds half a backup.
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
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    db.close();
  }
}
